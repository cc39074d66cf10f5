/**
 * Upper bounds (seconds) of the claim-cycle latency histogram: a cycle is one store transaction
 * (commit finished attempts, reclaim expired leases, claim due steps), from about a millisecond on
 * SQLite to seconds on a loaded PostgreSQL.
 */
export const CYCLE_SECONDS_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/**
 * What an engine measures of itself for `/metrics` (runtime/metrics.ts): its store cycles' latency,
 * plain tallies, no metrics library, one call per cycle. The figures every worker shares (runs,
 * steps, attempts, reclaims, hook calls, usage by model) come from the store instead.
 */
export class EngineMeter {
  /** Cycles per bucket of CYCLE_SECONDS_BUCKETS (not cumulative); the last slot: above every bound. */
  readonly cycleBuckets = new Array<number>(CYCLE_SECONDS_BUCKETS.length + 1).fill(0);
  cycles = 0;
  cycleSeconds = 0;

  /** A store cycle took `ms` milliseconds. */
  cycleEnded(ms: number): void {
    const seconds = ms / 1000;
    let bucket = 0;
    while (bucket < CYCLE_SECONDS_BUCKETS.length && seconds > CYCLE_SECONDS_BUCKETS[bucket]!) bucket++;
    this.cycleBuckets[bucket]!++;
    this.cycles++;
    this.cycleSeconds += seconds;
  }
}
