import { isBatonError } from '../core/errors.js';
import { BLOCKED_ACTIONS, type BlockedAction, blockOfCapability } from '../runtime/capability-urls.js';
import { applyRunCommand } from '../runtime/commands/run-commands.js';
import type { CapabilityKind } from './capability-answer.js';
import type { ConsoleContext } from './context.js';

/**
 * `POST /blocked/<run>/<step>/<token>/<retry|skip>`: a blocked step's capability URL (a hook's
 * button) retries or skips it without a session, as `baton retry|skip` do. The token is bound to
 * the event that blocked the step (engine/blocked-urls.ts), so it works while that block lasts,
 * once. How every capability URL is answered (GET asks first; the same 404 for anything wrong):
 * capability-answer.ts.
 */

const VERB: Record<BlockedAction, string> = { retry: 'Retry', skip: 'Skip' };

/** How a blocked step's URL is checked, asked about and answered (the key: the home's, as it is now). */
export function blockedCapability(ctx: ConsoleContext, key: Buffer): CapabilityKind<BlockedAction> {
  return {
    kind: 'blocked',
    actions: BLOCKED_ACTIONS,
    refused: {
      error: 'no blocked step answers to this URL (it is wrong, was used, or the step is no longer blocked)',
      text: 'This link no longer works: it is wrong, was used, or the step is no longer blocked',
    },
    holds: (target) => blockOfCapability(ctx.commands, key, target),
    question: ({ runId, stepId, action }) => ({
      question: `${VERB[action]} step ${stepId} of run ${runId}?`,
      button: VERB[action],
      comment: false,
    }),
    act: async ({ runId, stepId, action }) => {
      await applyRunCommand(ctx.commands, { command: action, runId, stepId });
      return action === 'retry' ? 'retried' : 'skipped';
    },
    // Another answer came first (the step is no longer blocked), or the run cannot take it now
    // (stopped by its budget: `baton resume` first): said as the CLI says it.
    refusal: (error) =>
      isBatonError(error, 'INVALID_TRANSITION') ? { status: 409, message: error.message } : null,
  };
}
