import type pg from 'pg';
import { BatonError } from '../../core/errors.js';

interface WorkListenerOptions {
  /** A new, unconnected client for the LISTEN connection (one at a time; a lost one is replaced). */
  newClient: () => pg.Client;
  /** The channel commits that make work due notify (`baton_<schema>`, a plain identifier). */
  channel: string;
  /** Longest wait, whatever the caller asked: the safety net for notifications lost unseen. */
  pollMs: number;
  /** Longest wait while not listening (connecting, or the connection was lost): a plain poll. */
  unlistenedPollMs: number;
  /** First wait before reconnecting a lost connection; doubled per failure, up to 10 times it. */
  reconnectMs: number;
}

interface Waiter {
  /** When the waiter's timer fires (ms since the epoch). */
  deadline: number;
  timer: NodeJS.Timeout | undefined;
  done: () => void;
}

/**
 * The LISTEN side of wake-ups: one dedicated connection, opened at the first wait, listening on the
 * schema's channel. A notification's payload is the earliest due time of the work it announces:
 * a waiter wakes then (at once when it is due already). A lost connection is replaced with backoff,
 * and every (re)connection wakes the waiters, since what was notified meanwhile was missed; while
 * not listening, waits are cut to a plain poll. Nothing here rejects.
 */
export class WorkListener {
  private client: pg.Client | null = null;
  /** LISTEN is in place: notifications arrive. */
  private listening = false;
  private started = false;
  private closed = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Earliest due time announced since the last cycle began; null: none. */
  private pending: number | null = null;
  /** When the last announcement came (ms since the epoch). */
  private announcedAt = Number.NEGATIVE_INFINITY;
  private readonly waiters = new Set<Waiter>();

  constructor(private readonly options: WorkListenerOptions) {
    if (!Number.isInteger(options.pollMs) || options.pollMs < 1) {
      throw new BatonError(
        'CONFIG_INVALID',
        `postgres pollMs: expected a whole number of milliseconds of at least 1, got ${options.pollMs}`,
      );
    }
  }

  /** A cycle that claims begins: it sees every commit notified before now. */
  cycleStarted(): void {
    this.pending = null;
  }

  /**
   * Resolves at `untilMs`, at the safety poll, when announced work is due, or when `signal` aborts.
   * Work announced since the last cycle began ends it when due, unless nothing was announced after
   * `since` (a caller that looked at the store then and runs no cycle).
   */
  wait(untilMs: number, signal: AbortSignal, since = Number.NEGATIVE_INFINITY): Promise<void> {
    if (this.closed || signal.aborted) return Promise.resolve();
    this.startListening();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        deadline: Number.POSITIVE_INFINITY,
        timer: undefined,
        done: () => {
          if (!this.waiters.delete(waiter)) return;
          clearTimeout(waiter.timer);
          signal.removeEventListener('abort', waiter.done);
          resolve();
        },
      };
      this.waiters.add(waiter);
      signal.addEventListener('abort', waiter.done, { once: true });
      const pollMs = this.listening ? this.options.pollMs : this.options.unlistenedPollMs;
      const unseen = this.announcedAt > since ? this.pending : null;
      const deadline = Math.min(untilMs, Date.now() + pollMs, unseen ?? untilMs);
      this.schedule(waiter, deadline);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    for (const waiter of [...this.waiters]) waiter.done();
    this.drop();
  }

  private schedule(waiter: Waiter, at: number): void {
    waiter.deadline = at;
    clearTimeout(waiter.timer);
    waiter.timer = setTimeout(waiter.done, Math.max(0, at - Date.now()));
  }

  /** Work is (or becomes) due at `dueAt`: waiters sleeping past it wake then. */
  private announce(dueAt: number): void {
    this.announcedAt = Date.now();
    this.pending = this.pending === null ? dueAt : Math.min(this.pending, dueAt);
    for (const waiter of this.waiters) if (dueAt < waiter.deadline) this.schedule(waiter, dueAt);
  }

  private startListening(): void {
    if (this.started) return;
    this.started = true;
    void this.listen();
  }

  private async listen(): Promise<void> {
    const client = this.options.newClient();
    this.client = client;
    // Without these a dropped connection would be an uncaught 'error' event, ending the process.
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.channel !== this.options.channel) return;
      const dueAt = Number(message.payload);
      this.announce(Number.isFinite(dueAt) ? dueAt : Date.now());
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.options.channel}"`);
    } catch {
      this.lost(client);
      return;
    }
    if (this.client !== client) return;
    this.failures = 0;
    this.listening = true;
    // Commits notified before LISTEN took effect were missed: look now.
    this.announce(Number.NEGATIVE_INFINITY);
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.drop();
    if (this.closed) return;
    // Until LISTEN is back, nothing would wake the waiters: they poll.
    const pollAt = Date.now() + this.options.unlistenedPollMs;
    for (const waiter of this.waiters) if (waiter.deadline > pollAt) this.schedule(waiter, pollAt);
    this.failures++;
    const delay = Math.min(
      this.options.reconnectMs * 2 ** (this.failures - 1),
      this.options.reconnectMs * 10,
    );
    this.retryTimer = setTimeout(() => void this.listen(), delay);
    this.retryTimer.unref();
  }

  private drop(): void {
    const client = this.client;
    this.client = null;
    this.listening = false;
    client?.end().catch(() => undefined);
  }
}
