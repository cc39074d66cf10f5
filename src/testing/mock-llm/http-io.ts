import type { IncomingMessage, ServerResponse } from 'node:http';

/** Request bodies above this are refused, like Anthropic's 32 MB Messages limit. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

type BodyResult = { ok: true; text: string } | { ok: false; reason: 'too_large' | 'aborted' };

export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        settle({ ok: false, reason: 'too_large' });
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => settle({ ok: true, text: Buffer.concat(chunks).toString('utf8') }));
    req.on('error', () => settle({ ok: false, reason: 'aborted' }));
    req.on('close', () => settle({ ok: false, reason: 'aborted' }));
  });
}

export function jsonBytes(body: unknown): Buffer {
  return Buffer.from(JSON.stringify(body), 'utf8');
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const bytes = jsonBytes(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': String(bytes.length),
  });
  res.end(bytes);
}

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
} as const;

/** One SSE frame: `data: JSON` (OpenAI) or `event: NAME` + `data: JSON` (Anthropic). */
export function sseFrame(data: unknown, event?: string): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`;
}

/** Sends a 200 SSE response made of `frames`, then ends it. */
export function sendSse(res: ServerResponse, frames: readonly string[]): void {
  res.writeHead(200, SSE_HEADERS);
  for (const frame of frames) res.write(frame);
  res.end();
}

/**
 * Resets the connection (TCP RST). With `bytes`, they are written first and the reset follows once
 * they have been handed to the socket; with headers sent and no bytes, it follows a moment later.
 */
export function resetAfter(res: ServerResponse, bytes?: Buffer | string): void {
  const socket = res.socket;
  if (!socket) return;
  const reset = () => {
    if (!socket.destroyed) socket.resetAndDestroy();
  };
  if (bytes !== undefined && bytes.length > 0) {
    res.write(bytes, reset);
  } else if (res.headersSent) {
    setTimeout(reset, 10);
  } else {
    reset();
  }
}
