import type { IncomingMessage, ServerResponse } from 'node:http';
import { isBatonError } from '../core/errors.js';
import { BLOCKED_ACTIONS, type BlockedAction, blockSeqOf, blockSeqOfToken } from '../engine/blocked-urls.js';
import {
  type CapabilityTarget,
  capabilityTargetOf,
  MAX_ANSWER_BYTES,
  readAnswerBody,
  sendAnswer,
  sendQuestionPage,
} from './capability-page.js';
import type { ConsoleContext } from './context.js';
import { sendJson } from './respond.js';

/**
 * `POST /blocked/<run>/<step>/<token>/<retry|skip>`: a blocked step's capability URL (a hook's
 * button) retries or skips it without a session, as `baton retry|skip` do; a GET shows a page that
 * asks first. The token is bound to the event that blocked the step (engine/blocked-urls.ts), so
 * it works while that block lasts, once. A wrong token, an unknown run or step and a step that is
 * no longer blocked (the URL was used) all get the same 404; the token is checked from the URL
 * alone before anything is read.
 */

const REFUSED = {
  error: 'no blocked step answers to this URL (it is wrong, was used, or the step is no longer blocked)',
};
const REFUSED_TEXT = 'This link no longer works: it is wrong, was used, or the step is no longer blocked';

export function isBlockedCapabilityPath(pathname: string): boolean {
  return pathname.startsWith('/blocked/');
}

export async function answerBlockedCapability(
  ctx: ConsoleContext,
  key: Buffer,
  request: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): Promise<void> {
  if (request.method !== 'POST' && request.method !== 'GET') {
    res.writeHead(405, { Allow: 'GET, POST' }).end();
    return;
  }
  // The body is not used, but read (bounded) so that the connection stays usable.
  if (request.method === 'POST' && (await readAnswerBody(request)) === null) {
    sendJson(res, 413, { error: `the body is larger than ${MAX_ANSWER_BYTES} bytes` });
    return;
  }
  const target = targetOf(pathname);
  // The token first, from the URL alone: a wrong one reads nothing, so an unknown run or step and a
  // known one cost the same. Only then is the step read, whose block must be the one it was made for.
  const tokenSeq = blockSeqOfToken(
    key,
    target ?? { runId: '', stepId: '' },
    target?.action ?? 'retry',
    target?.token ?? '',
  );
  const blockSeq = target && tokenSeq !== null ? await blockSeqOfTarget(ctx, target) : null;
  if (!target || blockSeq === null || blockSeq !== tokenSeq) {
    sendAnswer(request, res, 404, REFUSED, REFUSED_TEXT);
    return;
  }
  const { runId, stepId, action } = target;
  const verb = action === 'retry' ? 'Retry' : 'Skip';
  if (request.method === 'GET') {
    sendQuestionPage(res, {
      question: `${verb} step ${stepId} of run ${runId}?`,
      button: verb,
      comment: false,
    });
    return;
  }
  try {
    if (action === 'retry') await ctx.store.retryStep(runId, stepId, ctx.now());
    else await ctx.store.skipStep(runId, stepId, ctx.now());
  } catch (error) {
    // Another answer came first (the step is no longer blocked), or the run cannot take it now
    // (stopped by its budget: `baton resume` first): said as the CLI says it.
    if (isBatonError(error, 'INVALID_TRANSITION')) {
      sendAnswer(request, res, 409, { error: error.message }, error.message);
      return;
    }
    throw error;
  }
  const done = action === 'retry' ? 'retried' : 'skipped';
  sendAnswer(
    request,
    res,
    200,
    { ok: true, runId, stepId, outcome: done },
    `Step ${stepId} of run ${runId}: ${done}`,
  );
}

type Target = CapabilityTarget<BlockedAction>;

const targetOf = (pathname: string): Target | null =>
  capabilityTargetOf(pathname, 'blocked', BLOCKED_ACTIONS);

/** The seq of the event that blocked the step the URL names, if it is blocked now. */
async function blockSeqOfTarget(ctx: ConsoleContext, target: Target): Promise<number | null> {
  const run = await ctx.unmasked.getRunSteps(target.runId, { statuses: ['blocked'], everyStepUpTo: 0 });
  if (!run?.steps.some((step) => step.stepId === target.stepId && step.status === 'blocked')) return null;
  return blockSeqOf(await ctx.unmasked.getEvents(target.runId), target.stepId);
}
