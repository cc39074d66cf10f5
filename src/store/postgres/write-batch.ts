import { createHash } from 'node:crypto';
import { runningCount } from '../../core/claim-rules.js';
import type { BatonEvent } from '../../core/events.js';
import type { OutputArtifact } from '../../core/failure.js';
import { fallbackPlanStep } from '../../core/fallback.js';
import type { FlowLimit } from '../../core/flow.js';
import { hooksFor } from '../../core/hooks.js';
import type { HookSpec, PlanStep } from '../../core/plan/types.js';
import { stepClaimRank } from '../../core/priority.js';
import { planIndex, type RunState, TIMED_STEP_STATUSES } from '../../core/run-state.js';
import { type KeptEvent, nextWaitAt } from '../../core/waits.js';
import { stepFlowKey } from '../flow-accounting.js';
import type { AttemptKey } from '../store.js';
import { ATTEMPT_USAGE_ONCE, type AttemptRow, attemptKeyText } from '../store-rows.js';
import { toPgJson } from './pg-json.js';

/** The earliest due time of a run's ready, retry_wait and waiting steps (`runs.next_due_at`); null: none. */
export function nextDueAt(run: Pick<RunState, 'steps'>): number | null {
  let earliest: number | null = null;
  for (const step of run.steps) {
    if (
      TIMED_STEP_STATUSES.has(step.status) &&
      step.dueAt !== null &&
      (earliest === null || step.dueAt < earliest)
    )
      earliest = step.dueAt;
  }
  return earliest;
}

/**
 * The lowest claim rank of a run's ready, retry_wait and waiting steps (`runs.next_rank`, the
 * order claims lock runs in: core/priority.ts); null: none.
 */
export function nextClaimRank(run: Pick<RunState, 'steps' | 'plan'>): number | null {
  let lowest: number | null = null;
  run.steps.forEach((step, position) => {
    if (!TIMED_STEP_STATUSES.has(step.status) || step.dueAt === null) return;
    const rank = stepClaimRank(run.plan, position, step.dueAt)!;
    if (lowest === null || rank < lowest) lowest = rank;
  });
  return lowest;
}

/**
 * The function a step runs next (`steps.fn`, which claims filter on for workers that register only
 * some functions): its own, or its fallback's once that took over; null when that is not a function.
 */
export function functionOf(step: PlanStep, onFallback: boolean): string | null {
  const runs = onFallback ? fallbackPlanStep(step) : step;
  return runs.kind === 'fn' ? (runs.fn ?? '') : null;
}

/**
 * Everything one transaction writes, sent as ONE statement (`writeBatchSql`): each table's rows go
 * as a JSON array expanded by json_to_recordset, so a cycle costs one round trip to write however
 * many runs, steps, events and attempts it changed.
 */
export class WriteBatch {
  private readonly events: object[] = [];
  private readonly runs: object[] = [];
  private readonly plans: object[] = [];
  private readonly steps: object[] = [];
  /** Steps a fan-out added (core/for-each.ts): inserted, with their position, instead of updated. */
  private readonly newSteps: object[] = [];
  /** One row per attempt (by attemptKeyText): an upsert may not touch the same row twice in one statement. */
  private readonly attempts = new Map<string, AttemptRow>();
  private readonly artifacts: object[] = [];
  private readonly flow: { key: string; starts: string }[] = [];
  /** Limits plans declared for keys that had none (CycleRuns.flowDeclarations), one row per key. */
  private readonly declared: object[] = [];
  /** The earliest due time of the steps this batch made due in running runs (the NOTIFY payload). */
  private dueAt: number | null = null;
  /** Events in this batch owe hook calls. */
  hooksOwed = false;
  /** Events kept for the runs held (looked up before their wait steps start), by run and event name. */
  private readonly keptEvents = new Map<string, KeptEvent>();
  /** Kept events taken by steps that started waiting: deleted after the batch, in its transaction. */
  readonly takenEvents: { runId: string; event: string }[] = [];

  /** Events kept for runs whose wait steps may start waiting in this cycle. */
  offerKeptEvents(rows: readonly { runId: string; event: string; kept: KeptEvent }[]): void {
    for (const row of rows) this.keptEvents.set(`${row.runId}\u0000${row.event}`, row.kept);
  }

  takeKeptEvent(runId: string, event: string): KeptEvent | null {
    const key = `${runId}\u0000${event}`;
    const kept = this.keptEvents.get(key) ?? null;
    if (kept) {
      this.keptEvents.delete(key);
      this.takenEvents.push({ runId, event });
    }
    return kept;
  }

  get empty(): boolean {
    return (
      this.events.length === 0 &&
      this.runs.length === 0 &&
      this.attempts.size === 0 &&
      this.flow.length === 0 &&
      this.declared.length === 0
    );
  }

  /** An event; `hooks` are the plan's, and the calls this event owes are written with it (whether any). */
  event(runId: string, at: number, event: BatonEvent, hooks?: readonly HookSpec[]): boolean {
    const { type, ...data } = event;
    const stepId = 'stepId' in data ? (data.stepId as string) : null;
    const owed = hooksFor(event, hooks);
    this.events.push({
      n: this.events.length,
      run_id: runId,
      at,
      type,
      step_id: stepId,
      data,
      hooks: owed.length > 0 ? owed : null,
    });
    if (owed.length > 0) this.hooksOwed = true;
    return owed.length > 0;
  }

  /**
   * The run row (its version bumped, its usage as the core added it up) and the given steps as they
   * are in `run`; the plan too when it changed, whose new hash is returned.
   */
  runState(
    run: RunState,
    changedSteps: Iterable<string>,
    planChanged: boolean,
    addedSteps: ReadonlySet<string> = new Set(),
  ): string | null {
    let planHash: string | null = null;
    if (planChanged) {
      const planJson = JSON.stringify(run.plan);
      planHash = createHash('sha256').update(planJson).digest('hex');
      this.plans.push({ run_id: run.id, plan: run.plan });
    }
    this.runs.push({
      id: run.id,
      status: run.status,
      attempts_total: run.attemptsTotal,
      blocked_reason: run.blockedReason,
      updated_at: run.updatedAt,
      finished_at: run.finishedAt,
      running_count: runningCount(run),
      next_due_at: nextDueAt(run),
      next_rank: nextClaimRank(run),
      next_wait_at: nextWaitAt(run),
      concurrency: planChanged ? run.plan.limits.concurrency : null,
      plan_hash: planHash,
      input_tokens: run.usage?.inputTokens ?? 0,
      output_tokens: run.usage?.outputTokens ?? 0,
      cost_usd: run.usage?.costUsd ?? 0,
    });
    const { position } = planIndex(run.plan);
    for (const stepId of changedSteps) {
      const index = position.get(stepId)!;
      const step = run.steps[index]!;
      const row = {
        run_id: run.id,
        step_id: step.stepId,
        status: step.status,
        attempt: step.attempt,
        tries: step.tries,
        due_at: step.dueAt,
        lease_owner: step.leaseOwner,
        lease_expires_at: step.leaseExpiresAt,
        started_at: step.startedAt,
        last_error: step.lastError,
        last_failure_class: step.lastFailureClass,
        fingerprint: step.fingerprint,
        fingerprint_repeats: step.fingerprintRepeats,
        result: step.resultJson,
        blocked_reason: step.blockedReason,
        updated_at: step.updatedAt,
        input_tokens: step.usage?.inputTokens ?? 0,
        output_tokens: step.usage?.outputTokens ?? 0,
        cost_usd: step.usage?.costUsd ?? 0,
        first_started_at: step.firstStartedAt ?? null,
        on_fallback: step.onFallback === true,
        interruptions: step.interruptions ?? 0,
        waiting_for: step.waitingFor ?? null,
        flow_key: stepFlowKey(run, index),
        fn: functionOf(run.plan.steps[index]!, step.onFallback === true),
      };
      // A fan-out's new item (core/for-each.ts) is inserted at its plan position, not updated.
      if (addedSteps.has(stepId)) this.newSteps.push({ ...row, position: index });
      else this.steps.push(row);
      if (run.status === 'running' && TIMED_STEP_STATUSES.has(step.status)) this.noteDue(step.dueAt);
    }
    return planHash;
  }

  /** Notes work made due at `dueAt`, so that the commit notifies sleeping workers. */
  noteDue(dueAt: number | null): void {
    if (dueAt === null) return;
    this.dueAt = this.dueAt === null ? dueAt : Math.min(this.dueAt, dueAt);
  }

  /** The starts of rate-limited flow keys a cycle's claims added (their rows are locked by it). */
  flowStarts(changed: readonly { key: string; starts: number[] }[]): void {
    for (const { key, starts } of changed) this.flow.push({ key, starts: JSON.stringify(starts) });
  }

  /** Limits plans declared (`flow:`) for keys without one: stored unless a limit is there by then. */
  flowDeclarations(limits: Iterable<FlowLimit>, now: number): void {
    for (const limit of limits)
      this.declared.push({
        key: limit.key,
        concurrency: limit.concurrency,
        rate_count: limit.rate?.count ?? null,
        rate_window_ms: limit.rate?.windowMs ?? null,
        at: now,
      });
  }

  attempt(row: AttemptRow): void {
    const key = attemptKeyText({ runId: row.run_id, stepId: row.step_id, attempt: row.attempt });
    // The first row wins: a completion is recorded before a reclaim of the same attempt.
    if (!this.attempts.has(key)) this.attempts.set(key, row);
  }

  artifact(key: AttemptKey, output: OutputArtifact): void {
    this.artifacts.push({ run_id: key.runId, step_id: key.stepId, attempt: key.attempt, ...output });
  }

  /** Parameters of `writeBatchSql`, in order. */
  params(): unknown[] {
    return [
      toPgJson(this.events),
      toPgJson(this.runs),
      toPgJson(this.plans),
      toPgJson(this.steps),
      toPgJson([...this.attempts.values()]),
      toPgJson(this.artifacts),
      this.dueAt === null ? null : String(this.dueAt),
      toPgJson(this.flow),
      toPgJson(this.newSteps),
      toPgJson(this.declared),
    ];
  }
}

/** The one statement that writes a WriteBatch, then notifies `channel` (delivered at commit) when work became due. */
export function writeBatchSql(schema: string, channel: string): string {
  return `WITH
  ev AS (
    INSERT INTO ${schema}.events (run_id, at, type, step_id, data, hooks)
    SELECT x.run_id, x.at, x.type, x.step_id, x.data, x.hooks
    FROM json_to_recordset($1::json) AS x (n integer, run_id text, at bigint, type text, step_id text, data json,
      hooks smallint[])
    ORDER BY x.n
    RETURNING seq, run_id, at, hooks),
  hd AS (
    INSERT INTO ${schema}.hook_deliveries (run_id, event_seq, hook, state, due_at)
    SELECT ev.run_id, ev.seq, h.hook, 'pending', ev.at FROM ev, unnest(ev.hooks) AS h (hook)),
  ru AS (
    UPDATE ${schema}.runs r SET status = x.status, attempts_total = x.attempts_total,
      blocked_reason = x.blocked_reason, updated_at = x.updated_at, finished_at = x.finished_at,
      running_count = x.running_count, next_due_at = x.next_due_at, next_rank = x.next_rank,
      next_wait_at = x.next_wait_at,
      concurrency = coalesce(x.concurrency, r.concurrency),
      plan_hash = coalesce(x.plan_hash, r.plan_hash), version = r.version + 1,
      input_tokens = x.input_tokens, output_tokens = x.output_tokens, cost_usd = x.cost_usd
    FROM json_to_recordset($2::json) AS x (id text, status text, attempts_total integer, blocked_reason text,
      updated_at bigint, finished_at bigint, running_count integer, next_due_at bigint, next_rank bigint,
      next_wait_at bigint,
      concurrency integer, plan_hash text, input_tokens bigint, output_tokens bigint, cost_usd double precision)
    WHERE r.id = x.id),
  pl AS (
    UPDATE ${schema}.run_plans p SET plan = x.plan
    FROM json_to_recordset($3::json) AS x (run_id text, plan json)
    WHERE p.run_id = x.run_id),
  st AS (
    UPDATE ${schema}.steps s SET status = x.status, attempt = x.attempt, tries = x.tries, due_at = x.due_at,
      lease_owner = x.lease_owner, lease_expires_at = x.lease_expires_at, started_at = x.started_at,
      last_error = x.last_error, last_failure_class = x.last_failure_class, fingerprint = x.fingerprint,
      fingerprint_repeats = x.fingerprint_repeats, result = x.result::json, blocked_reason = x.blocked_reason,
      updated_at = x.updated_at, input_tokens = x.input_tokens, output_tokens = x.output_tokens,
      cost_usd = x.cost_usd, first_started_at = x.first_started_at, on_fallback = x.on_fallback, interruptions = x.interruptions,
      waiting_for = x.waiting_for, flow_key = x.flow_key, fn = x.fn,
      -- The process noted for an attempt belongs to that attempt only.
      pid = CASE WHEN x.status = 'running' AND x.attempt = s.attempt THEN s.pid END,
      host = CASE WHEN x.status = 'running' AND x.attempt = s.attempt THEN s.host END
    FROM json_to_recordset($4::json) AS x (run_id text, step_id text, status text, attempt integer,
      tries integer, due_at bigint, lease_owner text, lease_expires_at bigint, started_at bigint, last_error text,
      last_failure_class text, fingerprint text, fingerprint_repeats integer, result text, blocked_reason text,
      updated_at bigint, input_tokens bigint, output_tokens bigint, cost_usd double precision, first_started_at bigint,
      on_fallback boolean, interruptions integer, waiting_for text, flow_key text, fn text)
    WHERE s.run_id = x.run_id AND s.step_id = x.step_id),
  ns AS (
    INSERT INTO ${schema}.steps (run_id, step_id, position, fn, status, attempt, tries, due_at, lease_owner,
      lease_expires_at, started_at, last_error, last_failure_class, fingerprint, fingerprint_repeats, result,
      blocked_reason, updated_at, flow_key)
    SELECT x.run_id, x.step_id, x.position, x.fn, x.status, x.attempt, x.tries, x.due_at, x.lease_owner,
      x.lease_expires_at, x.started_at, x.last_error, x.last_failure_class, x.fingerprint, x.fingerprint_repeats,
      x.result::json, x.blocked_reason, x.updated_at, x.flow_key
    FROM json_to_recordset($9::json) AS x (run_id text, step_id text, position integer, fn text, status text,
      attempt integer, tries integer, due_at bigint, lease_owner text, lease_expires_at bigint, started_at bigint,
      last_error text, last_failure_class text, fingerprint text, fingerprint_repeats integer, result text,
      blocked_reason text, updated_at bigint, flow_key text)),
  att AS (
    INSERT INTO ${schema}.attempts (run_id, step_id, attempt, owner, started_at, ended_at, outcome, failure_class,
      exit_code, fingerprint, message, summary, log_path, outputs, input_tokens, output_tokens, cost_usd)
    SELECT x.run_id, x.step_id, x.attempt, x.owner, x.started_at, x.ended_at, x.outcome, x.failure_class,
      x.exit_code, x.fingerprint, x.message, x.summary, x.log_path, x.outputs, x.input_tokens, x.output_tokens,
      x.cost_usd
    FROM json_to_recordset($5::json) AS x (run_id text, step_id text, attempt integer, owner text,
      started_at bigint, ended_at bigint, outcome text, failure_class text, exit_code integer, fingerprint text,
      message text, summary text, log_path text, outputs jsonb, input_tokens bigint, output_tokens bigint,
      cost_usd double precision)
    ${ATTEMPT_USAGE_ONCE}),
  art AS (
    INSERT INTO ${schema}.artifacts (run_id, step_id, attempt, path, size, sha256)
    SELECT x.run_id, x.step_id, x.attempt, x.path, x.size, x.sha256
    FROM json_to_recordset($6::json) AS x (run_id text, step_id text, attempt integer, path text, size bigint,
      sha256 text)
    ON CONFLICT DO NOTHING),
  fl AS (
    UPDATE ${schema}.flow_limits f SET starts = ARRAY(SELECT json_array_elements_text(x.starts::json)::bigint)
    FROM json_to_recordset($8::json) AS x (key text, starts text)
    WHERE f.key = x.key),
  fd AS (
    -- Never a lock on a row that is there (an operator's limit, or another worker's declaration):
    -- DO NOTHING takes none, so declaring cannot deadlock with a cycle that locked the key.
    INSERT INTO ${schema}.flow_limits (key, concurrency, rate_count, rate_window_ms, updated_at)
    SELECT x.key, x.concurrency, x.rate_count, x.rate_window_ms, x.at
    FROM json_to_recordset($10::json) AS x (key text, concurrency integer, rate_count integer,
      rate_window_ms bigint, at bigint)
    ON CONFLICT (key) DO NOTHING)
SELECT pg_notify('${channel}', $7::text) WHERE $7::text IS NOT NULL`;
}
