import type { StoredEvent } from '../core/events.js';
import { type EventWake, storeWake } from '../runtime/run-event-stream.js';
import type { Store } from '../runtime/types.js';
import { EventCursor } from './event-cursor.js';

/** What a page's stream is told about an event: enough to know what changed, no free text. */
interface EventNotice {
  seq: number;
  runId: string;
  type: string;
  stepId: string | null;
}

type Listener = (notice: EventNotice) => void;

/** Events kept for streams that connect a little after their page was drawn. */
const RECENT_MAX = 2000;
const READ_LIMIT = 500;
/**
 * A run's stream reads its run again after this long without a notice (the safety net of a notice
 * missed: an event whose seq this reader gave up waiting for, committed later).
 */
const WAKE_SAFETY_MS = 30_000;

/**
 * One reader of the event log for the whole console: it reads `listEventsAfter` every `pollMs` (and
 * when the store notifies, on PostgreSQL) while a stream is open and hands each new event to the streams that want it (all runs, or one run). A stream that
 * names where its page was drawn (`after`) first gets what it missed since.
 */
export class EventHub {
  private readonly listeners = new Set<{ runId: string | null; listener: Listener }>();
  private readonly recent: EventNotice[] = [];
  private cursor: EventCursor | null = null;
  /** The wait for the next read, while one is pending. */
  private waiting: AbortController | null = null;
  private readonly wake: EventWake;
  private polling = false;
  private stopped = false;

  constructor(
    private readonly store: Store,
    pollMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.wake = storeWake(store, pollMs);
  }

  /** The newest seq passed on (or in the log when nothing was read yet): a page's `after`. */
  async position(): Promise<number> {
    await this.start();
    return this.cursor!.readAfter;
  }

  /** Calls `listener` for every event after `after` (of `runId`, or of every run); returns the unsubscribe. */
  async subscribe(runId: string | null, after: number | null, listener: Listener): Promise<() => void> {
    await this.start();
    if (after !== null)
      for (const notice of this.recent)
        if (notice.seq > after && (runId === null || notice.runId === runId)) listener(notice);
    const entry = { runId, listener };
    this.listeners.add(entry);
    this.schedule();
    return () => {
      this.listeners.delete(entry);
    };
  }

  /**
   * What wakes one run's event stream (`GET /api/runs/<id>/events`, runtime/run-event-stream.ts):
   * a wait ends once this reader passed on an event of the run since the last wait ended (at once
   * if it did meanwhile), or after WAKE_SAFETY_MS. `stop` unsubscribes; a wait never outlives its signal.
   */
  async wakeFor(runId: string): Promise<{ wake: EventWake; stop: () => void }> {
    let noticed = false;
    let waiting: (() => void) | null = null;
    const stop = await this.subscribe(runId, null, () => {
      noticed = true;
      waiting?.();
    });
    const wake: EventWake = (signal) =>
      new Promise<void>((resolve) => {
        if (noticed || signal.aborted) {
          noticed = false;
          resolve();
          return;
        }
        const done = () => {
          waiting = null;
          noticed = false;
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, WAKE_SAFETY_MS);
        waiting = done;
        signal.addEventListener('abort', done, { once: true });
      });
    return { wake, stop };
  }

  private async start(): Promise<void> {
    if (this.cursor === null) this.cursor = new EventCursor(await this.store.lastEventSeq());
  }

  /** The next read: after `pollMs`, or sooner when the store notifies (PostgreSQL's LISTEN). */
  private schedule(): void {
    if (this.waiting !== null || this.stopped || this.listeners.size === 0) return;
    const waiting = new AbortController();
    this.waiting = waiting;
    void this.wake(waiting.signal).then(() => {
      if (this.waiting !== waiting) return;
      this.waiting = null;
      if (!this.stopped) void this.poll();
    });
  }

  private async poll(): Promise<void> {
    if (this.polling || this.cursor === null) return;
    this.polling = true;
    try {
      for (;;) {
        const from = this.cursor.readAfter;
        const events = await this.store.listEventsAfter(from, READ_LIMIT);
        const fresh = new Set(
          this.cursor.take(
            events.map((e) => e.seq),
            this.now(),
          ),
        );
        for (const event of events) if (fresh.has(event.seq)) this.pass(noticeOf(event));
        // A full read: more may follow, unless the cursor is held at a gap (the next poll reads on).
        if (events.length < READ_LIMIT || this.cursor.readAfter === from) break;
      }
    } catch (error) {
      process.stderr.write(`baton serve: reading the event log failed: ${(error as Error).message}\n`);
    } finally {
      this.polling = false;
      this.schedule();
    }
  }

  private pass(notice: EventNotice): void {
    this.recent.push(notice);
    if (this.recent.length > RECENT_MAX) this.recent.splice(0, this.recent.length - RECENT_MAX);
    for (const { runId, listener } of this.listeners)
      if (runId === null || runId === notice.runId) listener(notice);
  }

  stop(): void {
    this.stopped = true;
    this.waiting?.abort();
    this.waiting = null;
    this.listeners.clear();
  }
}

function noticeOf(event: StoredEvent): EventNotice {
  return {
    seq: event.seq,
    runId: event.runId,
    type: event.type,
    stepId: 'stepId' in event && typeof event.stepId === 'string' ? event.stepId : null,
  };
}
