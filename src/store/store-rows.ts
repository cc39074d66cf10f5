import {
  ATTEMPT_SUMMARY_MAX_CHARS,
  type FailureClass,
  type OutputArtifact,
  type StepUsage,
} from '../core/failure.js';
import { type FlowKeyState, liveStarts } from '../core/flow.js';
import type { Plan, PlanStep } from '../core/plan/types.js';
import type { RunState, RunStatus, StepState, StepStatus } from '../core/run-state.js';
import type {
  AttemptRecord,
  BlockedStep,
  Completion,
  FlowLimitStatus,
  LiveLease,
  RunStep,
  RunSummary,
} from './store.js';

/** The `runs` columns a summary is made of, the same in every dialect. */
export interface SummaryRow {
  id: string;
  plan_name: string;
  status: string;
  blocked_reason: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
  attempts_total: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export function summaryFromRow(row: SummaryRow, stepCounts: RunSummary['stepCounts']): RunSummary {
  return {
    id: row.id,
    planName: row.plan_name,
    status: row.status as RunStatus,
    blockedReason: row.blocked_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
    attemptsTotal: row.attempts_total,
    usage: { inputTokens: row.input_tokens, outputTokens: row.output_tokens, costUsd: row.cost_usd },
    stepCounts,
  };
}

/** A run's summary from its state as loaded or as a transaction just wrote it. */
export function summaryOf(run: RunState, usage: StepUsage): RunSummary {
  return {
    id: run.id,
    planName: run.plan.name,
    status: run.status,
    blockedReason: run.blockedReason,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    finishedAt: run.finishedAt,
    attemptsTotal: run.attemptsTotal,
    // A copy: the caller's summary is its own (the usage handed in may be the frozen NO_USAGE).
    usage: { ...usage },
    stepCounts: countSteps(run.steps),
  };
}

/** The `runs` columns a run's state is made of (PostgreSQL may return its bigint totals as text). */
export type RunStateRow = Omit<SummaryRow, 'plan_name' | 'input_tokens' | 'output_tokens'> & {
  input_tokens: number | string;
  output_tokens: number | string;
};

/** A run's state as both dialects load it: its row, its plan snapshot and its steps in plan order. */
export function runStateFromRow(
  row: RunStateRow,
  plan: Plan,
  steps: readonly StepState[],
  inputs: Readonly<Record<string, string>>,
): RunState {
  return {
    id: row.id,
    status: row.status as RunStatus,
    plan,
    attemptsTotal: row.attempts_total,
    // Added up by the core's transitions, written back with the run's row.
    usage: {
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      costUsd: row.cost_usd,
    },
    blockedReason: row.blocked_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
    steps,
    inputs,
  };
}

/**
 * A step's state columns, in the order both dialects read them (SQLite `.raw()` rows, PostgreSQL
 * `json_build_array`): an array per row is about half the cost of an object per row for a run of
 * 10,000 steps. Token totals may come as text (PostgreSQL bigint), the fallback flag as 0/1 (SQLite).
 */
export type StepValues = [
  stepId: string,
  status: string,
  attempt: number,
  tries: number,
  dueAt: number | null,
  leaseOwner: string | null,
  leaseExpiresAt: number | null,
  startedAt: number | null,
  lastError: string | null,
  lastFailureClass: string | null,
  fingerprint: string | null,
  fingerprintRepeats: number,
  resultJson: string | null,
  blockedReason: string | null,
  updatedAt: number,
  inputTokens: number | string,
  outputTokens: number | string,
  costUsd: number | string,
  firstStartedAt: number | null,
  onFallback: number | boolean,
  interruptions: number,
  waitingFor: string | null,
];

/** A step's state from its `StepValues` (a dialect may add columns after them). */
export function stepFromValues(v: readonly [...StepValues, ...unknown[]]): StepState {
  const inputTokens = Number(v[15]);
  const outputTokens = Number(v[16]);
  const costUsd = Number(v[17]);
  return {
    stepId: v[0],
    status: v[1] as StepStatus,
    attempt: v[2],
    tries: v[3],
    dueAt: v[4],
    leaseOwner: v[5],
    leaseExpiresAt: v[6],
    startedAt: v[7],
    lastError: v[8],
    lastFailureClass: v[9] as FailureClass | null,
    fingerprint: v[10],
    fingerprintRepeats: v[11],
    resultJson: v[12],
    blockedReason: v[13],
    updatedAt: v[14],
    firstStartedAt: v[18],
    ...(v[19] ? { onFallback: true } : {}),
    ...(v[20] > 0 ? { interruptions: v[20] } : {}),
    ...(v[21] !== null && v[21] !== undefined ? { waitingFor: v[21] } : {}),
    ...(inputTokens === 0 && outputTokens === 0 && costUsd === 0
      ? {}
      : { usage: { inputTokens, outputTokens, costUsd } }),
  };
}

/** Steps per status, as a summary counts them. */
export function countSteps(steps: readonly Pick<StepState, 'status'>[]): RunSummary['stepCounts'] {
  const counts: RunSummary['stepCounts'] = {};
  for (const step of steps) counts[step.status] = (counts[step.status] ?? 0) + 1;
  return counts;
}

/**
 * A step state as the reads return it: the same object, given its plan step's title and
 * dependencies (added, not spread into a copy: one object per step of a 10,000-step `status`, not
 * two). `state` must be the caller's own, freshly read.
 */
export function runStep(state: StepState, planStep: PlanStep): RunStep {
  const step = state as RunStep;
  step.title = planStep.title;
  step.dependsOn = planStep.dependsOn;
  return step;
}

/** An `attempts` row, as written and read, with its outputs decoded (JSON text in SQLite, jsonb in Postgres). */
export interface AttemptRow {
  run_id: string;
  step_id: string;
  attempt: number;
  owner: string | null;
  started_at: number | null;
  ended_at: number | null;
  outcome: AttemptRecord['outcome'];
  failure_class: string | null;
  exit_code: number | null;
  fingerprint: string | null;
  message: string | null;
  summary: string | null;
  log_path: string | null;
  outputs: OutputArtifact[];
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
}

/** The attempt row of a completion: discarded when its worker had lost the lease (`live` false). */
export function completionAttemptRow(
  completion: Completion,
  live: boolean,
  step: StepState | undefined,
): AttemptRow {
  const { outcome } = completion;
  return {
    run_id: completion.runId,
    step_id: completion.stepId,
    attempt: completion.attempt,
    owner: completion.owner,
    started_at: completion.startedAt,
    ended_at: completion.endedAt,
    outcome: !live ? 'discarded' : outcome.ok ? 'succeeded' : 'failed',
    failure_class: outcome.ok ? null : outcome.failureClass,
    exit_code: outcome.exitCode ?? null,
    fingerprint: outcome.ok || !live ? null : (step?.fingerprint ?? null),
    message: outcome.ok ? null : outcome.message,
    // The attempt keeps a summary; the full result is in the step (or the artifact store).
    summary: outcome.ok ? outcome.summary.slice(0, ATTEMPT_SUMMARY_MAX_CHARS) : null,
    log_path: completion.logPath,
    outputs: outcome.ok ? outcome.outputs : [],
    input_tokens: outcome.usage?.inputTokens ?? null,
    output_tokens: outcome.usage?.outputTokens ?? null,
    cost_usd: outcome.usage?.costUsd ?? null,
  };
}

/** The attempt row of a lease that ran out: `before` and `after` are the step around expireLease. */
export function interruptedAttemptRow(
  runId: string,
  before: StepState,
  after: StepState,
  now: number,
): AttemptRow {
  return {
    run_id: runId,
    step_id: before.stepId,
    attempt: before.attempt,
    owner: before.leaseOwner,
    started_at: before.startedAt,
    ended_at: now,
    outcome: 'interrupted',
    failure_class: 'interrupted',
    exit_code: null,
    fingerprint: after.fingerprint,
    message: after.lastError,
    summary: null,
    log_path: null,
    outputs: [],
    input_tokens: null,
    output_tokens: null,
    cost_usd: null,
  };
}

export function attemptFromRow(row: AttemptRow): AttemptRecord {
  return {
    runId: row.run_id,
    stepId: row.step_id,
    attempt: row.attempt,
    owner: row.owner,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    outcome: row.outcome,
    failureClass: row.failure_class as FailureClass | null,
    exitCode: row.exit_code,
    fingerprint: row.fingerprint,
    message: row.message,
    summary: row.summary,
    logPath: row.log_path,
    outputs: row.outputs,
    usage:
      row.input_tokens === null
        ? null
        : { inputTokens: row.input_tokens, outputTokens: row.output_tokens ?? 0, costUsd: row.cost_usd ?? 0 },
  };
}

/** A `flow_limits` row (either dialect) with the attempts running under its key, as the flow gate takes it. */
export function flowKeyState(row: {
  key: string;
  concurrency: number | null;
  rate_count: number | null;
  rate_window_ms: number | string | null;
  running: number | string;
  starts: number[];
}): FlowKeyState {
  return {
    limit: {
      key: row.key,
      concurrency: row.concurrency,
      rate:
        row.rate_count === null || row.rate_window_ms === null
          ? null
          : { count: row.rate_count, windowMs: Number(row.rate_window_ms) },
    },
    running: Number(row.running),
    starts: row.starts,
  };
}

/** A limit as `baton flow list` shows it: with what runs under it and its starts in the window now. */
export function flowLimitStatus(state: FlowKeyState, updatedAt: number, now: number): FlowLimitStatus {
  const { limit, running, starts } = state;
  return { ...limit, running, recentStarts: liveStarts(limit.rate, starts, now).length, updatedAt };
}

/**
 * SQL (both stores): the attempt row holds no tokens or cost yet. A report's usage is written onto
 * an attempt row, and added to its run, only while this holds: a report sent again after a commit
 * whose acknowledgement was lost must not count twice, while a late report whose attempt was marked
 * interrupted brings the tokens that row lacks.
 */
export const NO_USAGE_YET =
  'attempts.input_tokens IS NULL AND attempts.output_tokens IS NULL AND attempts.cost_usd IS NULL';

/** The end of both stores' attempt INSERT: a repeated row only fills in usage its row lacks. */
export const ATTEMPT_USAGE_ONCE = `ON CONFLICT (run_id, step_id, attempt) DO UPDATE SET
  input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, cost_usd = excluded.cost_usd
  WHERE ${NO_USAGE_YET}`;

/** One attempt as a map key. */
export function attemptKeyText(key: { runId: string; stepId: string; attempt: number }): string {
  return `${key.runId}\u0000${key.stepId}\u0000${key.attempt}`;
}

export interface BlockedStepRow {
  run_id: string;
  plan_name: string;
  run_status: string;
  step_id: string;
  attempt: number;
  last_failure_class: string | null;
  blocked_reason: string | null;
  updated_at: number | string;
}

export function blockedStepFromRow(row: BlockedStepRow): BlockedStep {
  return {
    runId: row.run_id,
    planName: row.plan_name,
    runStatus: row.run_status as RunStatus,
    stepId: row.step_id,
    attempt: row.attempt,
    failureClass: row.last_failure_class as FailureClass | null,
    reason: row.blocked_reason,
    blockedAt: Number(row.updated_at),
  };
}

/** A leased step joined with its run, as both dialects select it. */
export interface LeaseRow {
  run_id: string;
  step_id: string;
  attempt: number;
  plan_name: string;
  lease_owner: string | null;
  lease_expires_at: number | string;
  started_at: number | string | null;
  pid: number | null;
  host: string | null;
  flow_key: string | null;
}

export function leaseFromRow(row: LeaseRow): LiveLease {
  return {
    runId: row.run_id,
    stepId: row.step_id,
    attempt: row.attempt,
    planName: row.plan_name,
    owner: row.lease_owner ?? '',
    leaseExpiresAt: Number(row.lease_expires_at),
    startedAt: row.started_at === null ? null : Number(row.started_at),
    pid: row.pid,
    host: row.host,
    flowKey: row.flow_key,
  };
}
