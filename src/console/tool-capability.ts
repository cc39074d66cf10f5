import { isBatonError } from '../core/errors.js';
import { TOOL_ACTIONS, type ToolAction, toolCallOfCapability } from '../runtime/capability-urls.js';
import { decideToolCall } from '../runtime/commands/run-commands.js';
import type { CapabilityKind } from './capability-answer.js';
import type { ConsoleContext } from './context.js';
import { commentOf } from './wait-capability.js';

/**
 * `POST /tool/<run>/<step>/<token>/<approve|reject>`: a held tool call's capability URL (a `waiting`
 * hook's button) answers the call a running agent waits on (`agent.approve`) without a session, as
 * `baton approve|reject <run> <step> --tool <call>` do; the agent goes on in its session. The token
 * is bound to the call's request event (engine/tool-urls.ts), so it works while that call waits,
 * once. How every capability URL is answered (GET asks first; the same 404 for anything wrong):
 * capability-answer.ts.
 */

const VERB: Record<ToolAction, string> = { approve: 'Allow', reject: 'Deny' };

/** How a held tool call's URL is checked, asked about and answered (the key: the home's, as it is now). */
export function toolCapability(ctx: ConsoleContext, key: Buffer): CapabilityKind<ToolAction> {
  return {
    kind: 'tool',
    actions: TOOL_ACTIONS,
    refused: {
      error: 'no tool call waits on this URL (it is wrong, was used, or the call was answered or ended)',
      text: 'This link no longer works: it is wrong, was used, or the tool call was answered or ended',
    },
    holds: async (target) => (await toolCallOfCapability(ctx.commands, key, target)) !== null,
    question: ({ runId, stepId, action }) => ({
      question: `${VERB[action]} the tool call the agent of step ${stepId} of run ${runId} waits on?`,
      button: VERB[action],
      comment: true,
    }),
    act: async (target, body, type) => {
      const callId = await toolCallOfCapability(ctx.commands, key, target);
      // Answered between the check and now: the URL reads as used.
      if (callId === null) throw new ToolCallGone();
      const made = await decideToolCall(ctx.commands, {
        runId: target.runId,
        stepId: target.stepId,
        callId,
        decision: target.action,
        by: 'capability URL',
        comment: commentOf(body, type),
      });
      return made.decision === 'allow' ? 'allowed' : 'denied';
    },
    // Someone answered first (decideToolCall refuses a second answer): the URL reads as used.
    refusal: (error) =>
      error instanceof ToolCallGone || isBatonError(error, 'INVALID_ARGUMENT') ? 'refused' : null,
  };
}

class ToolCallGone extends Error {}
