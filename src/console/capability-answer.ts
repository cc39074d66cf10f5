import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CapabilityTarget } from '../runtime/capability-urls.js';
import {
  type CapabilityQuestion,
  capabilityTargetOf,
  MAX_ANSWER_BYTES,
  readAnswerBody,
  sendAnswer,
  sendQuestionPage,
} from './capability-page.js';
import { sendJson } from './respond.js';

/**
 * How `baton serve` answers a capability URL `/<kind>/<run>/<step>/<token>/<action>` (a waiting
 * step's, wait-capability.ts; a blocked step's, blocked-capability.ts) without a session: the token
 * is the credential. A GET (a chat button opens the URL in a browser, a link preview fetches it)
 * shows a page that asks first; a POST acts through a runtime command. A wrong token, an unknown
 * run or step, a wrong action and a step no longer in the state the token was made for (the URL was
 * used) all get the same 404, so the answer says nothing about what exists: the token is checked
 * from the URL alone before anything is read.
 */
export interface CapabilityKind<A extends string> {
  /** The path's first segment. */
  kind: string;
  actions: readonly A[];
  /** What every refused URL is answered (404): JSON's `error`, and a page's heading. */
  refused: { error: string; text: string };
  /** Whether the URL's token is the one of its step's state now (null: no URL, checked all the same). */
  holds(target: CapabilityTarget<A> | null): Promise<boolean>;
  /** What a GET asks. */
  question(target: CapabilityTarget<A>): CapabilityQuestion;
  /** The POST's action, with its body (UTF-8, within MAX_ANSWER_BYTES); returns its outcome (`approved`). */
  act(target: CapabilityTarget<A>, body: string, contentType: string): Promise<string>;
  /** How a refusal of `act` is answered: as a refused URL, or a status with its message; null: not handled. */
  refusal(error: unknown): 'refused' | { status: number; message: string } | null;
}

export async function answerCapability<A extends string>(
  spec: CapabilityKind<A>,
  request: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): Promise<void> {
  if (request.method !== 'POST' && request.method !== 'GET') {
    res.writeHead(405, { Allow: 'GET, POST' }).end();
    return;
  }
  // Read (bounded) even when the action takes no body, so that the connection stays usable.
  const body = request.method === 'POST' ? await readAnswerBody(request) : '';
  if (body === null) {
    sendJson(res, 413, { error: `the body is larger than ${MAX_ANSWER_BYTES} bytes` });
    return;
  }
  const refuse = () => sendAnswer(request, res, 404, { error: spec.refused.error }, spec.refused.text);
  const target = capabilityTargetOf(pathname, spec.kind, spec.actions);
  if (!(await spec.holds(target)) || target === null) {
    refuse();
    return;
  }
  if (request.method === 'GET') {
    sendQuestionPage(res, spec.question(target));
    return;
  }
  let outcome: string;
  try {
    outcome = await spec.act(target, body, String(request.headers['content-type'] ?? ''));
  } catch (error) {
    const refusal = spec.refusal(error);
    if (refusal === null) throw error;
    if (refusal === 'refused') refuse();
    else sendAnswer(request, res, refusal.status, { error: refusal.message }, refusal.message);
    return;
  }
  const { runId, stepId } = target;
  sendAnswer(
    request,
    res,
    200,
    { ok: true, runId, stepId, outcome },
    `Step ${stepId} of run ${runId}: ${outcome}`,
  );
}
