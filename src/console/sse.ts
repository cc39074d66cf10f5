import type { IncomingMessage, ServerResponse } from 'node:http';
import { SECURITY_HEADERS } from './respond.js';

/** Comment lines that keep an idle stream open through proxies. */
const KEEPALIVE_MS = 15_000;

interface EventStream {
  send(data: unknown, options?: { event?: string; id?: number }): void;
  /** Resolves when the browser goes away (or `end` was called). */
  closed: Promise<void>;
  end(): void;
}

/**
 * Where a stream resumes: the newest of `?after=<seq>` and the `Last-Event-ID` header (which a
 * browser's EventSource sends when it opens the stream again); null when neither is a seq.
 */
export function resumeAfter(request: IncomingMessage, url: URL): number | null {
  const seqOf = (text: string | string[] | null | undefined) =>
    typeof text === 'string' && /^\d{1,15}$/.test(text) ? Number(text) : null;
  const known = [seqOf(url.searchParams.get('after')), seqOf(request.headers['last-event-id'])].filter(
    (seq): seq is number => seq !== null,
  );
  return known.length === 0 ? null : Math.max(...known);
}

/** Starts a Server-Sent Events answer: one JSON value per message. */
export function openEventStream(request: IncomingMessage, res: ServerResponse): EventStream {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'Content-Type': 'text/event-stream; charset=utf-8',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.write('retry: 2000\n\n');
  let open = true;
  let finish: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  const close = () => {
    if (!open) return;
    open = false;
    clearInterval(keepalive);
    finish();
  };
  request.on('close', close);
  res.on('close', close);
  return {
    send(data, options = {}) {
      if (!open) return;
      const lines = [
        ...(options.event ? [`event: ${options.event}`] : []),
        ...(options.id !== undefined ? [`id: ${options.id}`] : []),
        `data: ${JSON.stringify(data)}`,
      ];
      res.write(`${lines.join('\n')}\n\n`);
    },
    closed,
    end() {
      if (!open) return;
      close();
      res.end();
    },
  };
}
