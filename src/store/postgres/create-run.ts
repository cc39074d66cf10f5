import type { RunState } from '../../core/run-state.js';
import { newRunState } from '../cycle/new-run.js';
import { stepFlowKey } from '../flow-accounting.js';
import type { NewRun } from '../store.js';
import { toPgJson } from './pg-json.js';
import { functionOf, nextDueAt } from './write-batch.js';

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
      concurrency, next_due_at)
    VALUES ($1, $2, $3, $4::json, $5, $6, $7, $7, $8, $13)),
  pl AS (INSERT INTO ${schema}.run_plans (run_id, plan) VALUES ($1, $9::json)),
  st AS (
    INSERT INTO ${schema}.steps (run_id, step_id, position, fn, status, due_at, result, updated_at, flow_key)
    SELECT $1, x.step_id, x.position, x.fn, x.status, x.due_at, x.result::json, $7, x.flow_key
    FROM json_to_recordset($10::json) AS x (step_id text, position integer, fn text, status text, due_at bigint,
      result text, flow_key text)),
  ev AS (INSERT INTO ${schema}.events (run_id, at, type, step_id, data) VALUES ($1, $7, $11, NULL, $12::json))
SELECT pg_notify('${channel}', $14::text) WHERE $14::text IS NOT NULL`;
}
