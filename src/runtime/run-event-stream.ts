import { BatonError, runNotFound } from '../core/errors.js';
import type { StoredEvent } from '../core/events.js';
import { FINAL_RUN_STATUSES } from '../core/run-state.js';
import { NO_STEPS, type Store } from './types.js';

/**
 * What tells a run's event stream to read again: resolves when new events may have been stored (or
 * at the door's own interval), at once when `signal` aborts. Never rejects. Each door brings its
 * own (Baton: the engine's poll interval; the console: its one reader of the event log).
 */
export type EventWake = (signal: AbortSignal) => Promise<void>;

export interface RunEventStreamOptions {
  /**
   * Resume after this event (its `seq`, exclusive). Absent: from now, only the events stored after
   * the run's newest one.
   */
  after?: number;
  /** Ends the stream (the iterator returns) when it aborts: a client that went away. */
  signal?: AbortSignal;
}

/** The first event seq a stream reads after: a whole number of at least 0, or a BatonError naming it. */
export function checkAfter(after: unknown, name = 'after'): number | undefined {
  if (after === undefined) return undefined;
  if (typeof after !== 'number' || !Number.isSafeInteger(after) || after < 0) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${name}: expected an event id (a whole number of at least 0, the seq of an event), got ${String(after)}`,
    );
  }
  return after;
}

/**
 * A run's stored events as they are recorded, in order, each once: from now or after `after`,
 * until the run has ended (succeeded, failed or cancelled: its cleanup done) and every event up to
 * its end was given. `store` is the masked store of a door, so every event is masked as any read.
 * Throws RUN_NOT_FOUND for an unknown run. A run's events are numbered in commit order (both
 * stores write them holding the run's lock), so reading the run's events after the last one given
 * never skips one. The status is read before the events: when it says the run ended, the read that
 * follows holds everything up to that end. Returning early (a `break`) releases the wake.
 */
export async function* runEventStream(
  store: Store,
  runId: string,
  wake: EventWake,
  options: RunEventStreamOptions = {},
): AsyncGenerator<StoredEvent, void, undefined> {
  const stop = new AbortController();
  const outer = options.signal;
  const forward = () => stop.abort();
  outer?.addEventListener('abort', forward, { once: true });
  try {
    let run = await store.getRunSteps(runId, NO_STEPS);
    if (!run) throw runNotFound(runId);
    if (stop.signal.aborted || outer?.aborted) return;
    let afterSeq = checkAfter(options.after) ?? (await store.getEvents(runId)).at(-1)?.seq ?? 0;
    for (;;) {
      const ended = FINAL_RUN_STATUSES.has(run.status);
      const events = await store.getEvents(runId, { afterSeq });
      for (const event of events) {
        if (stop.signal.aborted) return;
        afterSeq = event.seq;
        yield event;
      }
      if (ended || stop.signal.aborted || outer?.aborted) return;
      await wake(stop.signal);
      if (stop.signal.aborted) return;
      const current = await store.getRunSteps(runId, NO_STEPS);
      // Deleted meanwhile (retention): nothing more will be stored.
      if (!current) return;
      run = current;
    }
  } finally {
    outer?.removeEventListener('abort', forward);
    stop.abort();
  }
}

/** A wake that resolves after `ms` (or when `signal` aborts), leaving no timer behind. */
export function intervalWake(ms: number): EventWake {
  return (signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
}

/**
 * The wake of a stream over a store: the store's own wake-up where it has one (PostgreSQL: a commit
 * that makes work due notifies, so a step that ended wakes the stream at once), capped at `pollMs`,
 * the interval at which a worker looks at a run (a run ending in another process notifies nothing);
 * elsewhere (SQLite) a look every `pollMs`, as its workers poll.
 */
export function storeWake(store: Store, pollMs: number): EventWake {
  const timer = intervalWake(pollMs);
  let lookedAt = Date.now();
  return async (signal) => {
    if (!store.waitForWork) await timer(signal);
    else await store.waitForWork(Date.now() + pollMs, signal, lookedAt);
    // The stream reads right after: what was announced before now is seen by that read.
    lookedAt = Date.now();
  };
}
