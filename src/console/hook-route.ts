import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_DELIVERY_BYTES } from '../core/triggers/trigger-rules.js';
import { deliver } from '../runtime/commands/trigger-commands.js';
import type { ConsoleContext } from './context.js';
import { readBoundedBody } from './request-body.js';

/** The path of a trigger's deliveries: `/hooks/<name>`. */
export const HOOK_PATH = /^\/hooks\/([A-Za-z0-9_-]{1,24})$/;

/**
 * `POST /hooks/<name>`: a webhook delivery to a trigger (runtime/commands/trigger-commands.ts). Its
 * signature is its credential (no session, and it may come through a proxy under another Host); a
 * body over 1 MiB is not read past the limit. The answer is JSON, never the secret or the signature.
 */
export async function answerHook(
  ctx: ConsoleContext,
  request: IncomingMessage,
  res: ServerResponse,
  name: string,
): Promise<void> {
  if (request.method !== 'POST') {
    res
      .writeHead(405, { Allow: 'POST', 'Content-Type': 'application/json' })
      .end('{"error":"POST a delivery"}\n');
    return;
  }
  const declared = Number(request.headers['content-length']);
  const body =
    Number.isFinite(declared) && declared > MAX_DELIVERY_BYTES
      ? null
      : await readBoundedBody(request, MAX_DELIVERY_BYTES);
  if (body === null && Number.isFinite(declared) && declared > MAX_DELIVERY_BYTES) {
    // Not read at all: the connection is closed after the answer rather than drained of a huge body.
    res.setHeader('Connection', 'close');
  }
  const answer = await deliver(ctx.commands, { name, headers: request.headers, body });
  if (answer.body === undefined) {
    res.writeHead(answer.status).end();
    return;
  }
  res
    .writeHead(answer.status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
    .end(`${JSON.stringify(answer.body)}\n`);
}
