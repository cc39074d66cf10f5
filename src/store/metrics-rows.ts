import type { FailureClass } from '../core/failure.js';
import type { RunStatus, StepStatus } from '../core/run-state.js';
import {
  HEARTBEAT_STALL_MESSAGE_START,
  STALL_MESSAGE_START,
  STREAM_STALL_MESSAGE_START,
} from '../core/stall-message.js';
import type { EndedAttempts, EndedUsage } from './store.js';

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

/**
 * Whether a `step.failed` whose message is the SQL expression `message` was an attempt stopped as
 * stalled: an agent's by the stall watchdog, a function's for want of heartbeats, a model's whose
 * stream went silent.
 */
export function stalledMessageSql(message: string): string {
  const starts = [STALL_MESSAGE_START, HEARTBEAT_STALL_MESSAGE_START, STREAM_STALL_MESSAGE_START];
  return `(${starts.map((start) => `${message} LIKE '${start}%'`).join(' OR ')})`;
}

/**
 * Whether the attempt that event `e` ended ran its step's fallback, for a step on its fallback now
 * (`steps.on_fallback`): yes when the step's latest fallback, retry or rerun event before `e` is its
 * `step.fallback` (the attempt that gave up ended just before it; a retry or a rerun puts the step
 * back on its own executor). Read through `events_by_run` for those steps alone: rare, and short.
 * A step set back on its own executor after `e` but before the scrape read it counts as its own.
 */
export function fellBackSql(events: string): string {
  return `(SELECT f.type FROM ${events} f
    WHERE f.run_id = e.run_id AND f.seq < e.seq AND (f.step_id = e.step_id OR f.type = 'run.rerun_requested')
      AND f.type IN ('step.fallback', 'step.retry_requested', 'run.rerun_requested')
    ORDER BY f.seq DESC LIMIT 1) = 'step.fallback'`;
}

export interface AttemptEndRow {
  type: string;
  failure_class: string | null;
  n: number | string;
  reclaims: number | string | null;
  stalls: number | string | null;
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
  attemptsStalled: number;
} {
  let leasesReclaimed = 0;
  let attemptsStalled = 0;
  const attemptsEnded: EndedAttempts[] = [];
  for (const row of rows) {
    leasesReclaimed += Number(row.reclaims ?? 0);
    attemptsStalled += Number(row.stalls ?? 0);
    const outcome = row.type.slice('step.'.length) as EndedAttempts['outcome'];
    attemptsEnded.push({
      outcome,
      failureClass: outcome === 'failed' ? ((row.failure_class ?? 'transient') as FailureClass) : null,
      count: Number(row.n),
    });
  }
  return { attemptsEnded, leasesReclaimed, attemptsStalled };
}

/** A row of the attempts with usage ended in the counted range, per plan, step and executor. */
export interface UsageEndRow {
  plan_hash: string;
  run_id: string;
  step_id: string;
  fell_back: number | boolean | null;
  n: number | string;
  input_tokens: number | string;
  output_tokens: number | string;
  cost_usd: number;
}

export function endedUsage(rows: readonly UsageEndRow[]): EndedUsage[] {
  return rows.map((row) => ({
    planHash: row.plan_hash,
    runId: row.run_id,
    stepId: row.step_id,
    onFallback: row.fell_back === true || row.fell_back === 1,
    attempts: Number(row.n),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    costUsd: Number(row.cost_usd),
  }));
}
