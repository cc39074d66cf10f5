import type { StoredEvent } from '../../core/events.js';
import type { Plan } from '../../core/plan/types.js';
import { planSecretEnv } from '../../core/run-secrets.js';
import type { RunStatus } from '../../core/run-state.js';
import { hookCallDueSql } from '../hook-calls-due.js';
import type { HookDelivery, HookDeliveryKey } from '../store.js';
import type { PgPool } from './open-pool.js';

interface DeliveryRow {
  run_id: string;
  event_seq: string;
  hook: number;
  attempts: number;
  type: string;
  at: string;
  data: Record<string, unknown>;
  plan: Plan;
  plan_name: string;
  status: string;
  blocked_reason: string | null;
}

/**
 * The hook outbox of the Postgres store (rows are written with their events, see writeBatchSql):
 * due calls are leased with SKIP LOCKED so several workers never make the same call at once.
 */
export class PostgresHookDeliveries {
  constructor(
    private readonly pool: PgPool,
    /** The quoted schema name. */
    private readonly schema: string,
  ) {}

  async claim(owner: string, now: number, leaseMs: number, limit: number): Promise<HookDelivery[]> {
    const s = this.schema;
    const { rows } = await this.pool.query<DeliveryRow>(
      `WITH due AS (
         SELECT d.run_id, d.event_seq, d.hook FROM ${s}.hook_deliveries d
         WHERE ${hookCallDueSql('$1')}
         ORDER BY d.due_at LIMIT $2 FOR UPDATE SKIP LOCKED),
       leased AS (
         UPDATE ${s}.hook_deliveries d SET lease_owner = $3, lease_expires_at = $4
         FROM due WHERE d.run_id = due.run_id AND d.event_seq = due.event_seq AND d.hook = due.hook
         RETURNING d.run_id, d.event_seq, d.hook, d.attempts)
       SELECT l.run_id, l.event_seq, l.hook, l.attempts, e.type, e.at, e.data, p.plan, r.plan_name, r.status,
         r.blocked_reason
       FROM leased l JOIN ${s}.events e ON e.seq = l.event_seq JOIN ${s}.run_plans p ON p.run_id = l.run_id
         JOIN ${s}.runs r ON r.id = l.run_id`,
      [now, limit, owner, now + leaseMs],
    );
    const claimed: HookDelivery[] = [];
    for (const row of rows) {
      const spec = row.plan.hooks?.[row.hook];
      if (!spec) continue;
      const eventSeq = Number(row.event_seq);
      claimed.push({
        runId: row.run_id,
        eventSeq,
        hook: row.hook,
        attempts: row.attempts,
        spec,
        event: {
          type: row.type,
          ...row.data,
          seq: eventSeq,
          runId: row.run_id,
          at: Number(row.at),
        } as StoredEvent,
        planName: row.plan_name,
        runStatus: row.status as RunStatus,
        blockedReason: row.blocked_reason,
        secretEnv: planSecretEnv(row.plan),
      });
    }
    return claimed;
  }

  async finish(
    key: HookDeliveryKey,
    result: { ok: true } | { ok: false; error: string; retryAt: number | null },
  ): Promise<void> {
    const where = 'WHERE run_id = $1 AND event_seq = $2 AND hook = $3';
    if (result.ok) {
      await this.pool.query(
        `UPDATE ${this.schema}.hook_deliveries SET state = 'done', attempts = attempts + 1, lease_owner = NULL,
           lease_expires_at = NULL, last_error = NULL ${where}`,
        [key.runId, key.eventSeq, key.hook],
      );
      return;
    }
    await this.pool.query(
      `UPDATE ${this.schema}.hook_deliveries SET state = $4, attempts = attempts + 1, due_at = $5, lease_owner = NULL,
         lease_expires_at = NULL, last_error = $6 ${where}`,
      [
        key.runId,
        key.eventSeq,
        key.hook,
        result.retryAt === null ? 'failed' : 'pending',
        result.retryAt ?? 0,
        result.error.slice(0, 500),
      ],
    );
  }
}
