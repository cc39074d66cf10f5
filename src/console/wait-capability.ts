import type { IncomingMessage, ServerResponse } from 'node:http';
import { isBatonError } from '../core/errors.js';
import { WAIT_ACTIONS, type WaitAction, waitSeqOfToken } from '../engine/wait-urls.js';
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
import { currentWait, decideWait, sendWaitEvent, waitIsOver } from './wait-answers.js';

/**
 * `POST /wait/<run>/<step>/<token>/<action>`: a capability URL answers a waiting step without a
 * session (a Slack button, a webhook, a mail link); the token is the credential, so neither the
 * session cookie nor the CSRF token is asked. A GET (a chat button opens the URL in a browser)
 * shows a page that asks first (capability-page.ts). An unknown run or step, a step that no longer
 * waits (the URL was used), a wrong action and a wrong token all get the same 404, so the answer
 * says nothing about what exists: the token is checked from the URL alone before anything is read.
 */

const REFUSED = {
  error: 'no waiting step answers to this URL (it is wrong, was used, or its wait ended)',
};
const REFUSED_TEXT = 'This link no longer works: it is wrong, was used, or the wait ended';

export function isWaitCapabilityPath(pathname: string): boolean {
  return pathname.startsWith('/wait/');
}

export async function answerWaitCapability(
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
  const body = request.method === 'POST' ? await readAnswerBody(request) : '';
  if (body === null) {
    sendJson(res, 413, { error: `the body is larger than ${MAX_ANSWER_BYTES} bytes` });
    return;
  }
  const target = targetOf(pathname);
  // The token first, from the URL alone: a wrong one reads nothing, so an unknown run or step and a
  // known one cost the same. Only then is the wait read, which must still be the one it was made for.
  const waitSeq = waitSeqOfToken(key, target ?? NO_TARGET, target?.action ?? 'approve', target?.token ?? '');
  const wait = target && waitSeq !== null ? await waitOfTarget(ctx, target) : null;
  if (!target || !wait || wait.waitSeq !== waitSeq) {
    sendAnswer(request, res, 404, REFUSED, REFUSED_TEXT);
    return;
  }
  if (request.method === 'GET') {
    askFirst(res, target);
    return;
  }
  const type = String(request.headers['content-type'] ?? '');
  try {
    if (target.action === 'event') {
      await sendWaitEvent(ctx.store, target.runId, wait.waitingFor, body, ctx.secretsOf, ctx.now());
    } else {
      const comment = commentOf(body, type);
      await decideWait(
        ctx.store,
        target.runId,
        target.stepId,
        target.action,
        { by: 'capability URL', comment },
        ctx.now(),
      );
    }
  } catch (error) {
    if (waitIsOver(error)) {
      sendAnswer(request, res, 404, REFUSED, REFUSED_TEXT);
      return;
    }
    if (isBatonError(error, 'INVALID_ARGUMENT')) {
      sendAnswer(request, res, 400, { error: error.message }, error.message);
      return;
    }
    throw error;
  }
  const done = { approve: 'approved', reject: 'rejected', event: 'received' }[target.action];
  sendAnswer(
    request,
    res,
    200,
    { ok: true, runId: target.runId, stepId: target.stepId, outcome: done },
    `Step ${target.stepId} of run ${target.runId}: ${done}`,
  );
}

/** The page a GET shows: a question and a button that POSTs; an event's payload is POSTed as JSON instead. */
function askFirst(res: ServerResponse, target: Target): void {
  const step = `step ${target.stepId} of run ${target.runId}`;
  if (target.action === 'event') {
    sendQuestionPage(res, {
      question: `Send the event ${step} waits for? POST its JSON payload to this URL; the button sends none (null)`,
      button: 'Send without a payload',
      comment: false,
    });
    return;
  }
  const verb = target.action === 'approve' ? 'Approve' : 'Reject';
  sendQuestionPage(res, { question: `${verb} ${step}?`, button: verb, comment: true });
}

type Target = CapabilityTarget<WaitAction>;

/** What a path that names no capability is checked as: the same work as any other. */
const NO_TARGET = { runId: '', stepId: '' };

const targetOf = (pathname: string): Target | null => capabilityTargetOf(pathname, 'wait', WAIT_ACTIONS);

/** The wait the URL names, if its step waits now and the action fits its kind. */
async function waitOfTarget(ctx: ConsoleContext, target: Target) {
  const run = await ctx.unmasked.getRun(target.runId);
  if (!run) return null;
  const wait = await currentWait(ctx.unmasked, run, target.stepId);
  if (!wait) return null;
  const fits = wait.kind === 'event' ? target.action === 'event' : target.action !== 'event';
  return fits ? wait : null;
}

/** The comment of an approval: `{"comment": ...}`, a form's `comment`, or plain text; empty: none. */
function commentOf(body: string, type: string): string | null {
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
