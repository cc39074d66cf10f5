import { runNotFound } from '../../core/errors.js';
import type { BatonEvent } from '../../core/events.js';
import type { PgPool } from './open-pool.js';
import { toPgJson } from './pg-json.js';

/**
 * Appends events an executor emits while a step runs, in one statement. The run's row lock is taken
 * before any event gets its sequence number, so a run's events are numbered in commit order and a
 * reader following `afterSeq` never skips one.
 */
export async function appendRunEvents(
  pool: PgPool,
  schema: string,
  runId: string,
  events: readonly BatonEvent[],
  now: number,
): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((event, n) => {
    const { type, ...data } = event;
    return { n, type, step_id: 'stepId' in data ? (data.stepId ?? null) : null, data };
  });
  const { rowCount } = await pool.query(
    `WITH run AS (SELECT id FROM ${schema}.runs WHERE id = $1 FOR NO KEY UPDATE)
     INSERT INTO ${schema}.events (run_id, at, type, step_id, data)
     SELECT run.id, $2, x.type, x.step_id, x.data
     FROM run, json_to_recordset($3::json) AS x (n integer, type text, step_id text, data json)
     ORDER BY x.n`,
    [runId, now, toPgJson(rows)],
  );
  if (!rowCount) throw runNotFound(runId);
}
