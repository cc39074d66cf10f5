import type { AttemptKey } from '../store.js';
import type { PgPool } from './open-pool.js';
import { inTransaction } from './transaction.js';

const keyOf = (key: AttemptKey) => `${key.runId}\u0000${key.stepId}\u0000${key.attempt}`;

/**
 * Extends the leases `owner` still holds on `attempts` to `now + leaseMs`, in one transaction that
 * first locks their runs (in id order, like every writer), so a renewal is ordered before or after any
 * cycle that loaded these steps. Returns the attempts whose lease was lost (cancelled, reclaimed).
 */
export async function renewLeaseRows(
  pool: PgPool,
  schema: string,
  request: { owner: string; attempts: readonly AttemptKey[]; leaseMs: number; now: number },
): Promise<AttemptKey[]> {
  const { owner, attempts, leaseMs, now } = request;
  if (attempts.length === 0) return [];
  const s = schema;
  const runIds = [...new Set(attempts.map((key) => key.runId))].sort();
  const renewed = await inTransaction(pool, async (client) => {
    await client.query(`SELECT id FROM ${s}.runs WHERE id = ANY ($1::text[]) ORDER BY id FOR NO KEY UPDATE`, [
      runIds,
    ]);
    const { rows } = await client.query<AttemptKey>(
      `WITH renewed AS (
         UPDATE ${s}.steps st SET lease_expires_at = $2
         FROM json_to_recordset($1::json) AS x (run_id text, step_id text, attempt integer)
         WHERE st.run_id = x.run_id AND st.step_id = x.step_id AND st.attempt = x.attempt
           AND st.lease_owner = $3 AND st.status = 'running'
         RETURNING st.run_id, st.step_id, st.attempt),
       bumped AS (UPDATE ${s}.runs SET version = version + 1 WHERE id = ANY ($4::text[]))
       SELECT run_id AS "runId", step_id AS "stepId", attempt FROM renewed`,
      [
        JSON.stringify(attempts.map((k) => ({ run_id: k.runId, step_id: k.stepId, attempt: k.attempt }))),
        now + leaseMs,
        owner,
        runIds,
      ],
    );
    return new Set(rows.map(keyOf));
  });
  return attempts.filter((key) => !renewed.has(keyOf(key)));
}
