/** Expired leases one cycle reclaims at most. */
export const RECLAIM_BATCH = 100;
/** How often (in the request clock) a cycle looks for expired leases. */
const RECLAIM_INTERVAL_MS = 250;

/**
 * When a store's cycles look for expired leases. Leases last seconds: looking a few times a
 * second is soon enough, and the other cycles save the query.
 */
export class ReclaimSchedule {
  private nextAt = Number.MIN_SAFE_INTEGER;

  /** Whether the cycle at `now` looks (the next one looks RECLAIM_INTERVAL_MS later). */
  take(now: number): boolean {
    if (now < this.nextAt) return false;
    this.nextAt = now + RECLAIM_INTERVAL_MS;
    return true;
  }
}
