import { TIMED_STEP_STATUSES } from '../core/run-state.js';

// What is due, in SQL, for the claim of either store and `baton check`'s cheap idle read
// (runtime/idle-read.ts, which must not load the store: keep this module's imports tiny): a
// ready or retry_wait step whose `dueAt` has come, or a waiting step whose timeout (its `dueAt`)
// has. The same rule in memory is the core's `isDueStep` (core/run-state.ts).

/**
 * SQL (both dialects): the step row `s` waits for its due time. The condition of SQLite's partial
 * index `steps_due` (migration 000009) word for word, so that a query naming it may use the index.
 * Equalities joined by OR, not an IN list: SQLite evaluates the index's condition on every UPDATE of
 * a step's status, and for an IN list of three or more constants it builds a temporary b-tree each
 * time (about 4 µs per step written).
 */
export const TIMED_STEP_SQL = `(${[...TIMED_STEP_STATUSES].map((status) => `s.status = '${status}'`).join(' OR ')})`;

/** SQL (both dialects): the step row `s` is due at `now` (a parameter or expression). */
export function dueStepSql(now: string): string {
  return `${TIMED_STEP_SQL} AND s.due_at <= ${now}`;
}

/** SQL (SQLite): the step row `s` is due at `now` and its run is running, from the steps_due index. */
export function dueStepOfRunningRunSql(now: string): string {
  return `${dueStepSql(now)}
      AND EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.status = 'running')`;
}
