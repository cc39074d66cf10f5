import { isBatonError } from '../core/errors.js';
import { WAIT_ACTIONS, type WaitAction, waitOfCapability } from '../runtime/capability-urls.js';
import { answerWait, decideStep } from '../runtime/commands/run-commands.js';
import type { CapabilityKind } from './capability-answer.js';
import type { ConsoleContext } from './context.js';

/**
 * `POST /wait/<run>/<step>/<token>/<action>`: a capability URL answers a waiting step without a
 * session (a Slack button, a webhook, a mail link), as `baton approve|reject|send` do: approve or
 * reject with a comment, or the event the step waits for with its JSON payload. How every
 * capability URL is answered (GET asks first; the same 404 for anything wrong): capability-answer.ts.
 */

const DONE: Record<WaitAction, string> = { approve: 'approved', reject: 'rejected', event: 'received' };

/** How a waiting step's URL is checked, asked about and answered (the key: the home's, as it is now). */
export function waitCapability(ctx: ConsoleContext, key: Buffer): CapabilityKind<WaitAction> {
  return {
    kind: 'wait',
    actions: WAIT_ACTIONS,
    refused: {
      error: 'no waiting step answers to this URL (it is wrong, was used, or its wait ended)',
      text: 'This link no longer works: it is wrong, was used, or the wait ended',
    },
    holds: async (target) => (await waitOfCapability(ctx.commands, key, target)) !== null,
    question: ({ runId, stepId, action }) => {
      const step = `step ${stepId} of run ${runId}`;
      // An event's payload is POSTed as JSON; the page's button sends none.
      if (action === 'event')
        return {
          question: `Send the event ${step} waits for? POST its JSON payload to this URL; the button sends none (null)`,
          button: 'Send without a payload',
          comment: false,
        };
      const verb = action === 'approve' ? 'Approve' : 'Reject';
      return { question: `${verb} ${step}?`, button: verb, comment: true };
    },
    act: async ({ runId, stepId, action }, body, type) => {
      if (action === 'event') await answerWait(ctx.commands, { runId, stepId, action: 'send', data: body });
      else
        await decideStep(ctx.commands, {
          runId,
          stepId,
          decision: action,
          by: 'capability URL',
          comment: commentOf(body, type),
        });
      return DONE[action];
    },
    refusal: (error) => {
      // Someone answered first: the wait is over, and the URL reads as used.
      if (
        isBatonError(error) &&
        ['INVALID_TRANSITION', 'STEP_NOT_FOUND', 'RUN_NOT_FOUND'].includes(error.code)
      )
        return 'refused';
      if (isBatonError(error, 'INVALID_ARGUMENT')) return { status: 400, message: error.message };
      return null;
    },
  };
}

/** The comment of an approval: `{"comment": ...}`, a form's `comment`, or plain text; empty: none. */
export function commentOf(body: string, type: string): string | null {
  if (body.trim() === '') return null;
  if (type.startsWith('application/json')) {
    try {
      const value = JSON.parse(body) as { comment?: unknown };
      return typeof value?.comment === 'string' ? value.comment : null;
    } catch {
      return null;
    }
  }
  if (type.startsWith('application/x-www-form-urlencoded')) return new URLSearchParams(body).get('comment');
  return body.slice(0, 4000);
}
