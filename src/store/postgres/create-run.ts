import type { RunState } from '../../core/run-state.js';
import { nextWaitAt } from '../../core/waits.js';
import { newRunState } from '../cycle/new-run.js';
import { stepFlowKey } from '../flow-accounting.js';
import type { NewRun } from '../store.js';
import { toPgJson } from './pg-json.js';
import { functionOf, nextClaimRank, nextDueAt } from './write-batch.js';

/** The new run's state and the parameters of `createRunSql`. */
export function createRunValues(spec: NewRun): { state: RunState; values: unknown[] } {
  const { state, event } = newRunState(spec);
  const { status, steps } = state;
  const { type, ...data } = event;
  const stepRows = spec.plan.steps.map((step, position) => ({
    step_id: step.id,
    position,
    fn: functionOf(step, false),
    status: steps[position]!.status,
    due_at: steps[position]!.dueAt,
    result: steps[position]!.resultJson,
    flow_key: stepFlowKey(state, position),
  }));
  const dueAt = nextDueAt(state);
  return {
    state,
    values: [
      spec.id,
      spec.plan.name,
      spec.planHash,
      toPgJson(spec.inputs),
      spec.workspace,
      status,
      spec.now,
      spec.plan.limits.concurrency,
      toPgJson(spec.plan),
      toPgJson(stepRows),
      type,
      toPgJson(data),
      dueAt,
      status === 'running' && dueAt !== null ? String(dueAt) : null,
      nextWaitAt(state),
      toPgJson(spec.labels ?? {}),
      nextClaimRank(state),
    ],
  };
}

/**
 * One statement storing a run, its plan snapshot, its steps and its run.created event (atomic
 * without an explicit transaction), notifying `channel` when a step is due.
 */
export function createRunSql(schema: string, channel: string): string {
  return `WITH
  ru AS (
    INSERT INTO ${schema}.runs (id, plan_name, plan_hash, inputs, workspace, status, created_at, updated_at,
      concurrency, next_due_at, next_wait_at, next_rank)
    VALUES ($1, $2, $3, $4::json, $5, $6, $7, $7, $8, $13, $15, $17)),
  pl AS (INSERT INTO ${schema}.run_plans (run_id, plan) VALUES ($1, $9::json)),
  lb AS (INSERT INTO ${schema}.run_labels (run_id, key, value) SELECT $1, l.key, l.value FROM json_each_text($16::json) AS l),
  st AS (
    INSERT INTO ${schema}.steps (run_id, step_id, position, fn, status, due_at, result, updated_at, flow_key)
    SELECT $1, x.step_id, x.position, x.fn, x.status, x.due_at, x.result::json, $7, x.flow_key
    FROM json_to_recordset($10::json) AS x (step_id text, position integer, fn text, status text, due_at bigint,
      result text, flow_key text)),
  ev AS (INSERT INTO ${schema}.events (run_id, at, type, step_id, data) VALUES ($1, $7, $11, NULL, $12::json))
SELECT pg_notify('${channel}', $14::text) WHERE $14::text IS NOT NULL`;
}

/**
 * The parameters of `createRunsSql`: many new runs (a schedule tick's) as three JSON arrays of rows,
 * and the earliest due time to notify.
 */
export function createRunsValues(specs: readonly NewRun[]): unknown[] {
  const runs: unknown[] = [];
  const steps: unknown[] = [];
  const events: unknown[] = [];
  let notify: number | null = null;
  for (const spec of specs) {
    const { state, values } = createRunValues(spec);
    const dueAt = values[12] as number | null;
    runs.push({
      id: spec.id,
      plan_name: spec.plan.name,
      plan_hash: spec.planHash,
      inputs: spec.inputs,
      workspace: spec.workspace,
      status: state.status,
      at: spec.now,
      concurrency: spec.plan.limits.concurrency,
      next_due_at: dueAt,
      next_wait_at: values[14],
      next_rank: values[16],
      plan: spec.plan,
      labels: spec.labels ?? {},
    });
    for (const row of JSON.parse(values[9] as string) as Record<string, unknown>[])
      steps.push({ run_id: spec.id, ...row });
    events.push({ run_id: spec.id, at: spec.now, type: values[10], data: JSON.parse(values[11] as string) });
    if (state.status === 'running' && dueAt !== null)
      notify = notify === null ? dueAt : Math.min(notify, dueAt);
  }
  return [toPgJson(runs), toPgJson(steps), toPgJson(events), notify === null ? null : String(notify)];
}

/** Many runs in one statement (`createRunSql` for each, at once): a schedule tick starting a thousand slots. */
export function createRunsSql(schema: string, channel: string): string {
  return `WITH
  ru AS (
    INSERT INTO ${schema}.runs (id, plan_name, plan_hash, inputs, workspace, status, created_at, updated_at,
      concurrency, next_due_at, next_wait_at, next_rank)
    SELECT x.id, x.plan_name, x.plan_hash, x.inputs, x.workspace, x.status, x.at, x.at, x.concurrency, x.next_due_at,
      x.next_wait_at, x.next_rank
    FROM json_to_recordset($1::json) AS x (id text, plan_name text, plan_hash text, inputs json, workspace text,
      status text, at bigint, concurrency integer, next_due_at bigint, next_wait_at bigint, next_rank bigint)),
  pl AS (INSERT INTO ${schema}.run_plans (run_id, plan) SELECT x.id, x.plan FROM json_to_recordset($1::json) AS x (id text, plan json)),
  lb AS (
    INSERT INTO ${schema}.run_labels (run_id, key, value)
    SELECT x.id, l.key, l.value FROM json_to_recordset($1::json) AS x (id text, labels json), json_each_text(x.labels) AS l),
  st AS (
    INSERT INTO ${schema}.steps (run_id, step_id, position, fn, status, due_at, result, updated_at, flow_key)
    SELECT x.run_id, x.step_id, x.position, x.fn, x.status, x.due_at, x.result::json, r.at, x.flow_key
    FROM json_to_recordset($2::json) AS x (run_id text, step_id text, position integer, fn text, status text,
      due_at bigint, result text, flow_key text)
    JOIN json_to_recordset($1::json) AS r (id text, at bigint) ON r.id = x.run_id),
  ev AS (
    INSERT INTO ${schema}.events (run_id, at, type, step_id, data)
    SELECT x.run_id, x.at, x.type, NULL, x.data FROM json_to_recordset($3::json) AS x (run_id text, at bigint, type text, data json))
SELECT pg_notify('${channel}', $4::text) WHERE $4::text IS NOT NULL`;
}
