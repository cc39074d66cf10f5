/** Expired leases one cycle reclaims at most. */
export const RECLAIM_BATCH = 100;
/** How often (in the request clock) a cycle looks for expired leases. */
const RECLAIM_INTERVAL_MS = 250;
/**
 * How often a cycle looks for due waits its claims may not reach (a timeout in a blocked run, a wait
 * made due while no slot is free): a look reads the due steps, and a wait's time is not to the ms.
 */
export const WAIT_LOOK_INTERVAL_MS = 1000;

/**
 * When a store's cycles look for expired leases (or, with WAIT_LOOK_INTERVAL_MS, for due waits).
 * Leases last seconds: looking a few times a second is soon enough, and the other cycles save the
 * query.
 */
export class ReclaimSchedule {
  private nextAt = Number.MIN_SAFE_INTEGER;

  constructor(private readonly intervalMs = RECLAIM_INTERVAL_MS) {}

  /** Whether the cycle at `now` looks (the next one looks intervalMs later). */
  take(now: number): boolean {
    if (now < this.nextAt) return false;
    this.nextAt = now + this.intervalMs;
    return true;
  }
}
