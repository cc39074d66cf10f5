import { WAIT_FLOW_KEY } from '../core/flow.js';

/**
 * Which due wait steps a cycle moves without a slot of its run (CycleRuns.moveDueWaits: a wait
 * starts, or its timeout fires), in SQL for both dialects: written here once. The step row is `s`,
 * due (dueStepSql, store/due-steps.ts); its run row is `r`. The same rule in memory:
 * `waitStepDue` (core/waits.ts).
 */

/** The step row `s` is a wait step: waiting, or ready to start waiting (found by its flow key, WAIT_FLOW_KEY). */
export const WAIT_STEP_SQL = `(s.status = 'waiting' OR (s.status = 'ready' AND s.flow_key = '${WAIT_FLOW_KEY}'))`;

/** The run `r` lets its wait step `s` move: running, or blocked for a waiting step (its timeout fires there too). */
export const WAIT_MOVES_IN_RUN_SQL =
  "(r.status = 'running' OR (r.status = 'blocked' AND s.status = 'waiting'))";
