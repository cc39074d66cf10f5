import type { KeptEvent } from '../../core/waits.js';
import { dueStepSql } from '../due-steps.js';
import { WAIT_MOVES_IN_RUN_SQL, WAIT_STEP_SQL } from '../due-waits.js';
import type { PgClient, PgPool } from './open-pool.js';

/** The events kept for these runs (sent before their steps waited): looked up under the runs' locks. */
export async function keptEventsOf(
  client: PgClient,
  schema: string,
  runIds: readonly string[],
): Promise<{ runId: string; event: string; kept: KeptEvent }[]> {
  const { rows } = await client.query<{ run_id: string; event: string; data_json: string; sent_at: string }>(
    `SELECT run_id, event, data_json, sent_at FROM ${schema}.wait_events WHERE run_id = ANY ($1::text[])`,
    [runIds],
  );
  return rows.map((row) => ({
    runId: row.run_id,
    event: row.event,
    kept: { dataJson: row.data_json, at: Number(row.sent_at) },
  }));
}

/**
 * Locks (SKIP LOCKED: another worker's runs are left to it) runs, running or blocked, with a wait
 * step due, earliest first: waiting with its timeout come, or ready to start waiting (found by its
 * flow key, WAIT_FLOW_KEY). Found from runs.next_due_at, which counts timeouts, so nothing is read
 * per waiting step. The cycle moves their waits (CycleRuns.moveDueWaits).
 */
export async function lockDueWaits(
  client: PgClient,
  schema: string,
  scope: { now: number; runId: string | null; exclude: readonly string[]; limit: number },
): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `SELECT r.id FROM ${schema}.runs r
     WHERE (r.status = 'running' OR r.status = 'blocked') AND r.next_due_at <= $1::bigint
       AND r.id <> ALL ($2::text[]) AND ($3::text IS NULL OR r.id = $3::text)
       AND EXISTS (SELECT 1 FROM ${schema}.steps s
         WHERE s.run_id = r.id AND ${dueStepSql('$1::bigint')} AND ${WAIT_STEP_SQL} AND ${WAIT_MOVES_IN_RUN_SQL})
     ORDER BY r.next_due_at, r.id LIMIT $4::integer
     FOR NO KEY UPDATE OF r SKIP LOCKED`,
    [scope.now, scope.exclude, scope.runId, scope.limit],
  );
  return rows.map((row) => row.id);
}

/** Deletes the kept events steps took in this transaction. */
export async function takeKeptEvents(
  client: PgClient,
  schema: string,
  taken: readonly { runId: string; event: string }[],
): Promise<void> {
  if (taken.length === 0) return;
  await client.query(
    `DELETE FROM ${schema}.wait_events w USING unnest($1::text[], $2::text[]) AS t (run_id, event)
     WHERE w.run_id = t.run_id AND w.event = t.event`,
    [taken.map((t) => t.runId), taken.map((t) => t.event)],
  );
}

/** Keeps an event for a run whose step does not wait yet; false: one of that name was kept already. */
export async function keepEvent(
  client: PgClient,
  schema: string,
  row: { runId: string; event: string; dataJson: string; at: number },
): Promise<boolean> {
  const { rowCount } = await client.query(
    `INSERT INTO ${schema}.wait_events (run_id, event, data_json, sent_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING`,
    [row.runId, row.event, row.dataJson, row.at],
  );
  return (rowCount ?? 0) > 0;
}

/** The runs with a step waiting for `event` now (the partial index steps_waiting_for). */
export async function runsWaitingFor(
  client: PgClient | PgPool,
  schema: string,
  event: string,
): Promise<string[]> {
  const { rows } = await client.query<{ run_id: string }>(
    `SELECT DISTINCT run_id FROM ${schema}.steps WHERE status = 'waiting' AND waiting_for = $1 ORDER BY run_id`,
    [event],
  );
  return rows.map((row) => row.run_id);
}
