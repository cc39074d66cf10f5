import type { WaitingStep } from './store.js';

/**
 * Waiting steps as both dialects list them (`listWaitingSteps`) and `baton check`'s idle read
 * prints them. Kept free of imports but types: the idle check bundles it without the store.
 */

/** A waiting step joined with its run, as both dialects select it. */
export interface WaitingStepRow {
  run_id: string;
  plan_name: string;
  step_id: string;
  waiting_for: string | null;
  due_at: number | string | null;
  updated_at: number | string;
}

export function waitingStepFromRow(row: WaitingStepRow): WaitingStep {
  return {
    runId: row.run_id,
    planName: row.plan_name,
    stepId: row.step_id,
    waitingFor: row.waiting_for ?? '',
    timeoutAt: row.due_at === null ? null : Number(row.due_at),
    since: Number(row.updated_at),
  };
}

/** SQLite: up to `?` waiting steps, longest waiting first (what `baton check` lists). */
export const SQLITE_WAITING_STEPS_SQL = `SELECT s.run_id, r.plan_name, s.step_id, s.waiting_for, s.due_at, s.updated_at
       FROM steps s INDEXED BY steps_waiting_for JOIN runs r ON r.id = s.run_id
       WHERE s.status = 'waiting' ORDER BY s.updated_at, s.run_id, s.step_id LIMIT ?`;

/** SQLite: how many steps wait. */
export const SQLITE_WAITING_COUNT_SQL =
  "SELECT count(*) AS n FROM steps INDEXED BY steps_waiting_for WHERE status = 'waiting'";
