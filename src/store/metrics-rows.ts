import type { FailureClass } from '../core/failure.js';
import type { RunStatus, StepStatus } from '../core/run-state.js';
import type { EndedAttempts } from './store.js';

// What both dialects share of `Store.metricsSnapshot`: the events that end an attempt, the one
// message that says a lease was reclaimed, and the rows turned into a snapshot.

/** The events that end an attempt: each attempt committed ends with exactly one of them. */
export const ATTEMPT_END_EVENTS_SQL = "'step.succeeded', 'step.degraded', 'step.failed'";

/**
 * A `step.failed` whose message matches this (SQL LIKE) was a lease reclaimed: the message
 * `expireLease` (core/transitions.ts) gives the interrupted attempt of a worker that died or
 * stalled. The store contract's metrics test fails if the two part.
 */
export const LEASE_RECLAIMED_MESSAGE_LIKE = "'lease of worker % expired: %'";

/** The run statuses whose steps are still counted (`MetricsSnapshot.steps`). */
export const UNFINISHED_RUN_STATUSES_SQL = "'awaiting_approval', 'running', 'blocked'";

export interface AttemptEndRow {
  type: string;
  failure_class: string | null;
  n: number | string;
  reclaims: number | string | null;
}

export interface StatusCountRow {
  status: string;
  n: number | string;
}

export function countsByStatus<S extends RunStatus | StepStatus>(
  rows: readonly StatusCountRow[],
): Partial<Record<S, number>> {
  const counts: Partial<Record<S, number>> = {};
  for (const row of rows) if (Number(row.n) > 0) counts[row.status as S] = Number(row.n);
  return counts;
}

export function endedAttempts(rows: readonly AttemptEndRow[]): {
  attemptsEnded: EndedAttempts[];
  leasesReclaimed: number;
} {
  let leasesReclaimed = 0;
  const attemptsEnded: EndedAttempts[] = [];
  for (const row of rows) {
    leasesReclaimed += Number(row.reclaims ?? 0);
    const outcome = row.type.slice('step.'.length) as EndedAttempts['outcome'];
    attemptsEnded.push({
      outcome,
      failureClass: outcome === 'failed' ? ((row.failure_class ?? 'transient') as FailureClass) : null,
      count: Number(row.n),
    });
  }
  return { attemptsEnded, leasesReclaimed };
}
