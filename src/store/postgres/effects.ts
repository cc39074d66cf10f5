import type { EffectKey, EffectRecord } from '../store.js';
import type { PgClient, PgPool } from './open-pool.js';
import { toPgJson } from './pg-json.js';

/**
 * The effect table: an intent written before a side effect, its result after. Each write is one
 * statement keyed by (run, step, key), so it needs no explicit transaction.
 */
export class PostgresEffects {
  constructor(
    private readonly pool: PgPool,
    /** The quoted schema name. */
    private readonly schema: string,
  ) {}

  async begin(key: EffectKey, now: number): Promise<EffectRecord | null> {
    const inserted = await this.pool.query(
      `INSERT INTO ${this.schema}.effects (run_id, step_id, key, state, created_at)
       VALUES ($1, $2, $3, 'intent', $4) ON CONFLICT (run_id, step_id, key) DO NOTHING`,
      [key.runId, key.stepId, key.key, now],
    );
    if (inserted.rowCount === 1) return null;
    // A separate statement: its snapshot includes the row the conflicting writer committed.
    const { rows } = await this.pool.query<{ state: 'intent' | 'done'; result: unknown }>(
      `SELECT state, result FROM ${this.schema}.effects WHERE run_id = $1 AND step_id = $2 AND key = $3`,
      [key.runId, key.stepId, key.key],
    );
    const row = rows[0];
    // Cleared in between: take the intent now.
    if (!row) return this.begin(key, now);
    return row.state === 'done' ? { state: 'done', result: row.result ?? null } : { state: 'intent' };
  }

  async complete(key: EffectKey, result: unknown, now: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.schema}.effects (run_id, step_id, key, state, result, created_at, completed_at)
       VALUES ($1, $2, $3, 'done', $4::json, $5, $5)
       ON CONFLICT (run_id, step_id, key) DO UPDATE SET state = 'done', result = excluded.result,
         completed_at = excluded.completed_at`,
      [key.runId, key.stepId, key.key, toPgJson(result ?? null), now],
    );
  }

  async clear(key: EffectKey): Promise<void> {
    await this.pool.query(
      `DELETE FROM ${this.schema}.effects WHERE run_id = $1 AND step_id = $2 AND key = $3 AND state = 'intent'`,
      [key.runId, key.stepId, key.key],
    );
  }

  /** Forgets every effect these steps recorded (a rerun that redoes them), in the caller's transaction. */
  async forgetSteps(client: PgClient, runId: string, stepIds: readonly string[]): Promise<void> {
    await client.query(`DELETE FROM ${this.schema}.effects WHERE run_id = $1 AND step_id = ANY($2::text[])`, [
      runId,
      [...stepIds],
    ]);
  }
}
