import type { IncomingMessage, ServerResponse } from 'node:http';
import { BatonError } from '../core/errors.js';
import { strictUtf8 } from '../core/payload-limit.js';
import type { CapabilityTarget } from '../runtime/capability-urls.js';
import { html } from './html.js';
import { readBoundedBody } from './request-body.js';
import { sendHtml, sendJson } from './respond.js';

/**
 * What a capability URL (a waiting or blocked step's) answers besides its POST: a chat button
 * (Slack, Discord, Feishu) opens its URL in a browser, which GETs it, and a link preview GETs it
 * too, so a GET never acts: it shows a page that asks, whose button POSTs to the same URL. A POST
 * from that page (a browser, asking for HTML) gets a page back; any other POST gets JSON.
 */

/** Bodies larger than this are refused: a comment or an event's payload. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export interface CapabilityQuestion {
  /** e.g. `Retry step fetch of run r1?` */
  question: string;
  /** The button's text, e.g. `Retry`. */
  button: string;
  /** Offer a comment field (approvals and rejections keep one). */
  comment: boolean;
}

export function sendQuestionPage(res: ServerResponse, asked: CapabilityQuestion): void {
  const comment = asked.comment
    ? html`<p><label>Comment (optional)<br><textarea name="comment" rows="3" cols="50"></textarea></label></p>`
    : '';
  sendHtml(
    res,
    200,
    html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${asked.question} · baton</title></head>
<body><main><h1>${asked.question}</h1><form method="post">${comment}<p><button type="submit">${asked.button}</button></p></form>
<p>This link works once.</p></main></body></html>`,
  );
}

/** The answer to a POST: a short page for a browser's form, JSON for anything else. */
export function sendAnswer(
  request: IncomingMessage,
  res: ServerResponse,
  status: number,
  value: Record<string, unknown>,
  said: string,
): void {
  if (!String(request.headers.accept ?? '').includes('text/html')) {
    sendJson(res, status, value);
    return;
  }
  sendHtml(
    res,
    status,
    html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${said} · baton</title></head>
<body><main><h1>${said}</h1></main></body></html>`,
  );
}

/**
 * The request's body as text, or null when it is larger than MAX_ANSWER_BYTES (answered 413);
 * bytes that are not UTF-8 are refused (400), never replaced.
 */
export async function readAnswerBody(request: IncomingMessage): Promise<string | null> {
  const body = await readBoundedBody(request, MAX_ANSWER_BYTES);
  if (body === null) return null;
  const text = strictUtf8(body);
  if (text === null)
    throw new BatonError(
      'INVALID_ARGUMENT',
      'the body is not valid UTF-8 text: send UTF-8 (nothing was stored)',
    );
  return text;
}

/** What a capability URL `/<kind>/<run>/<step>/<token>/<action>` names; null for any other path. */
export function capabilityTargetOf<A extends string>(
  pathname: string,
  kind: string,
  actions: readonly A[],
): CapabilityTarget<A> | null {
  const parts = pathname.split('/').slice(1);
  if (parts.length !== 5 || parts[0] !== kind) return null;
  const action = parts[4] as A;
  if (!actions.includes(action)) return null;
  try {
    return {
      runId: decodeURIComponent(parts[1]!),
      stepId: decodeURIComponent(parts[2]!),
      token: parts[3]!,
      action,
    };
  } catch {
    return null;
  }
}
