import type { MetricsQuery, MetricsSnapshot } from '../metrics-types.js';

// The figures of `/metrics` (runtime/metrics.ts). Contract suite: test/store-metrics-contract.ts.

export interface MetricsStore {
  /**
   * The figures `/metrics` exports (runtime/metrics.ts), from a few aggregate queries over indexes:
   * what they read grows with the live work and what failed, not with the history (runs per
   * status, the steps of unfinished runs, due work, leases, hook calls), plus the attempts that ended in events `query.events` (seq after
   * `afterSeq`, up to `upToSeq`), which a reader adds up from scrape to scrape.
   */
  metricsSnapshot(query: MetricsQuery): Promise<MetricsSnapshot>;
}
