import type { FlowLimit } from '../../core/flow.js';

// The flow limits of the Store contract (`baton flow`): every worker's claims obey them from its
// next cycle. Contract suite: test/store-flow-contract.ts.

export interface FlowLimitStore {
  /** `baton flow set`: sets (or replaces) the limit of a flow key; every worker obeys it from its next claim. */
  setFlowLimit(limit: FlowLimit, now: number): Promise<void>;
  /** `baton flow rm`: removes a key's limit; false when it had none. */
  removeFlowLimit(key: string): Promise<boolean>;
  /** Every flow limit, with the attempts running under its key and its starts in the current window. */
  listFlowLimits(now: number): Promise<FlowLimitStatus[]>;
}

export interface FlowLimitStatus extends FlowLimit {
  /** Attempts under the key running now, across all workers. */
  running: number;
  /** Starts that count against the rate now (0 without a rate). */
  recentStarts: number;
  updatedAt: number;
}
