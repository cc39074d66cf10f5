import { TIMED_STEP_STATUSES } from '../core/run-state.js';

// What is due, in SQL, for the claim of either store and `baton check`'s cheap idle read
// (cli/commands/check-idle.ts, which must not load the store: keep this module's imports tiny): a
// ready or retry_wait step whose `dueAt` has come, or a waiting step whose timeout (its `dueAt`) has. The same rule in memory is the core's `isDueStep`
// (core/run-state.ts).

/** The statuses of a step waiting for its due time, as an SQL list (the partial index `steps_due` is over them). */
const DUE_STATUSES_SQL = [...TIMED_STEP_STATUSES].map((status) => `'${status}'`).join(', ');

/** SQL (both dialects): the step row `s` is due at `now` (a parameter or expression). */
export function dueStepSql(now: string): string {
  return `s.status IN (${DUE_STATUSES_SQL}) AND s.due_at <= ${now}`;
}

/** SQL (SQLite): the step row `s` is due at `now` and its run is running, from the steps_due index. */
export function dueStepOfRunningRunSql(now: string): string {
  return `${dueStepSql(now)}
      AND EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.status = 'running')`;
}
