import { runNotFound } from '../core/errors.js';
import { runEventStream } from '../runtime/run-event-stream.js';
import { NO_STEPS } from '../runtime/types.js';
import type { Handler } from './context.js';
import { sendJson } from './respond.js';
import { openEventStream, resumeAfter } from './sse.js';

/**
 * `GET /api/runs/<id>/events`: the run's stored events as Server-Sent Events (`id:` the event's
 * seq, `event:` its type, `data:` the event as JSON, masked), from now or after `Last-Event-ID` /
 * `?after=`, until the run has ended; then the server ends the answer. What to send and when to end
 * is `Baton.watch`'s decision (runtime/run-event-stream.ts); the console's one reader of the event
 * log (EventHub) says when the run has new events. An unknown run: 404 with a JSON error.
 */
export const runEvents: Handler = async (ctx, req) => {
  const runId = req.params[0]!;
  const store = ctx.commands.store;
  if (!(await store.getRunSteps(runId, NO_STEPS))) {
    const error = runNotFound(runId);
    sendJson(req.res, 404, { error: { code: error.code, message: error.message } });
    return;
  }
  const after = resumeAfter(req.request, req.url);
  const stream = openEventStream(req.request, req.res);
  const gone = new AbortController();
  void stream.closed.then(() => gone.abort());
  const wake = await ctx.hub.wakeFor(runId);
  try {
    const events = runEventStream(store, runId, wake.wake, {
      ...(after === null ? {} : { after }),
      signal: gone.signal,
    });
    for await (const event of events) stream.send(event, { event: event.type, id: event.seq });
  } finally {
    wake.stop();
    stream.end();
  }
};
