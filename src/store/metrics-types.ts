import type { FailureClass } from '../core/failure.js';
import type { RunStatus, StepStatus } from '../core/run-state.js';

// What `Store.metricsSnapshot` is asked and answers (runtime/metrics.ts turns it into /metrics).

/** What `metricsSnapshot` reads. */
export interface MetricsQuery {
  /** Due work is what is due at this time (ms since the epoch). */
  now: number;
  /** Count the attempts ended in events with `afterSeq < seq <= upToSeq` (none when equal). */
  events: { afterSeq: number; upToSeq: number };
}

/** The store's figures at one time (`Store.metricsSnapshot`). */
export interface MetricsSnapshot {
  /** Every stored run, per status (absent: none). */
  runs: Partial<Record<RunStatus, number>>;
  /** The steps of runs not finished (awaiting approval, running, blocked), per status. */
  steps: Partial<Record<StepStatus, number>>;
  /** Steps of running runs due now (ready or retry_wait whose time came, waits whose timeout came): what workers would claim. */
  dueSteps: number;
  /** The earliest due time among them (null: none due). */
  oldestDueAt: number | null;
  /** Steps running with a lease that ran out: a worker died or stalled, the next cycle reclaims them. */
  expiredLeases: number;
  /**
   * Hook calls of stored runs: owed and not tried yet (`pending`), owed after failing at least
   * once (`retrying`), given up after their retries (`failed`).
   */
  hookDeliveries: { pending: number; retrying: number; failed: number };
  /** The newest event's seq (0: none): where the next `events` range may end. */
  lastEventSeq: number;
  /** Attempts ended in the `events` range, per outcome and failure class. */
  attemptsEnded: EndedAttempts[];
  /** Expired leases reclaimed in the `events` range (each ends its attempt `interrupted`). */
  leasesReclaimed: number;
  /** Attempts the stall watchdog stopped in the `events` range (`agent.stallTimeoutMs`). */
  attemptsStalled: number;
  /**
   * Tokens and cost of the attempts ended in the `events` range that reported usage (their attempt
   * rows'), per plan and step: what the reader turns into usage by model (runtime/model-labels.ts).
   */
  usageEnded: EndedUsage[];
}

/** Usage of attempts of one step of one plan (`MetricsSnapshot.usageEnded`). */
export interface EndedUsage {
  /** The plan hash of the attempts' run, as stored when the snapshot was read. */
  planHash: string;
  /** A run whose plan has that hash: where to read the plan. */
  runId: string;
  stepId: string;
  /** The attempts ran the step's fallback (the step had fallen back when they ended, and still is). */
  onFallback: boolean;
  attempts: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** Attempts that ended one way (`MetricsSnapshot.attemptsEnded`). */
export interface EndedAttempts {
  outcome: 'succeeded' | 'degraded' | 'failed';
  /** Null unless failed. */
  failureClass: FailureClass | null;
  count: number;
}
