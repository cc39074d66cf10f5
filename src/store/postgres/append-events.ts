import { runNotFound } from '../../core/errors.js';
import type { BatonEvent } from '../../core/events.js';
import { hooksFor, hookTrigger } from '../../core/hooks.js';
import type { HookSpec } from '../../core/plan/types.js';
import type { AppendGuard } from '../contract/events.js';
import type { PgClient, PgPool } from './open-pool.js';
import { toPgJson } from './pg-json.js';
import { type PgEventRow, pgEvent } from './postgres-reads.js';
import { inTransaction } from './transaction.js';

/**
 * Appends events an executor emits while a step runs, in one statement. The run's row lock is taken
 * before any event gets its sequence number, so a run's events are numbered in commit order and a
 * reader following `afterSeq` never skips one. An event that calls hooks (a running agent's held tool
 * call calls `waiting` hooks) owes its calls from the same statement, as a cycle's events do.
 */
export async function appendRunEvents(
  pool: PgPool,
  schema: string,
  runId: string,
  events: readonly BatonEvent[],
  now: number,
  guard?: AppendGuard,
): Promise<void> {
  if (events.length === 0) return;
  if (guard) {
    // The run's row locked first, then the events after the guard's seq read in a statement of
    // their own (READ COMMITTED: it sees what a writer that held the lock before committed).
    await inTransaction(pool, async (client) => {
      const { rowCount } = await client.query(
        `SELECT id FROM ${schema}.runs WHERE id = $1 FOR NO KEY UPDATE`,
        [runId],
      );
      if (!rowCount) throw runNotFound(runId);
      const { rows } = await client.query<PgEventRow>(
        `SELECT seq, run_id, at, type, data FROM ${schema}.events WHERE run_id = $1 AND seq > $2 ORDER BY seq`,
        [runId, guard.afterSeq],
      );
      const refusal = guard.refuse(rows.map(pgEvent));
      if (refusal) throw refusal;
      await insertEvents(client, schema, runId, events, now);
    });
    return;
  }
  await insertEvents(pool, schema, runId, events, now);
}

async function insertEvents(
  pool: PgPool | PgClient,
  schema: string,
  runId: string,
  events: readonly BatonEvent[],
  now: number,
): Promise<void> {
  const hooks = events.some((event) => hookTrigger(event) !== null)
    ? await planHooks(pool, schema, runId)
    : undefined;
  const rows = events.map((event, n) => {
    const { type, ...data } = event;
    const owed = hooksFor(event, hooks);
    return {
      n,
      type,
      step_id: 'stepId' in data ? (data.stepId ?? null) : null,
      data,
      hooks: owed.length > 0 ? owed : null,
    };
  });
  const { rows: written } = await pool.query<{ n: string }>(
    `WITH run AS (SELECT id FROM ${schema}.runs WHERE id = $1 FOR NO KEY UPDATE),
     ev AS (
       INSERT INTO ${schema}.events (run_id, at, type, step_id, data, hooks)
       SELECT run.id, $2, x.type, x.step_id, x.data, x.hooks
       FROM run, json_to_recordset($3::json) AS x (n integer, type text, step_id text, data json,
         hooks smallint[])
       ORDER BY x.n
       RETURNING seq, run_id, at, hooks),
     hd AS (
       INSERT INTO ${schema}.hook_deliveries (run_id, event_seq, hook, state, due_at)
       SELECT ev.run_id, ev.seq, h.hook, 'pending', ev.at FROM ev, unnest(ev.hooks) AS h (hook))
     SELECT count(*) AS n FROM ev`,
    [runId, now, toPgJson(rows)],
  );
  if (Number(written[0]?.n ?? 0) === 0) throw runNotFound(runId);
}

/** The run's plan's hooks (undefined: none, or no such run). */
async function planHooks(
  pool: PgPool | PgClient,
  schema: string,
  runId: string,
): Promise<HookSpec[] | undefined> {
  const { rows } = await pool.query<{ hooks: HookSpec[] | null }>(
    `SELECT plan->'hooks' AS hooks FROM ${schema}.run_plans WHERE run_id = $1`,
    [runId],
  );
  return rows[0]?.hooks ?? undefined;
}
