import type { BatonEvent, StoredEvent } from '../../core/events.js';
import type { Plan } from '../../core/plan/types.js';
import { planSecretEnv } from '../../core/run-secrets.js';
import type { RunStatus } from '../../core/run-state.js';
import { hookCallDueSql } from '../hook-calls-due.js';
import type { HookDelivery, HookDeliveryKey } from '../store.js';
import type { SqliteDatabase } from './open-database.js';

interface DeliveryRow {
  run_id: string;
  event_seq: number;
  hook: number;
  attempts: number;
  type: string;
  at: number;
  data_json: string;
  plan_json: string;
  plan_name: string;
  status: string;
  blocked_reason: string | null;
}

/** The hook outbox of the SQLite store: claim what is due under a lease, record each result. */
export class SqliteHookDeliveries {
  private readonly due;
  private readonly lease;
  private readonly done;
  private readonly retry;
  private readonly probe;

  constructor(db: SqliteDatabase) {
    this.due = db.prepare<[{ now: number; limit: number }], DeliveryRow>(
      `SELECT d.run_id, d.event_seq, d.hook, d.attempts, e.type, e.at, e.data_json, p.plan_json, r.plan_name,
         r.status, r.blocked_reason
       FROM hook_deliveries d INDEXED BY hook_deliveries_due
       JOIN events e ON e.seq = d.event_seq
       JOIN run_plans p ON p.run_id = d.run_id
       JOIN runs r ON r.id = d.run_id
       WHERE ${hookCallDueSql('@now')}
       ORDER BY d.due_at LIMIT @limit`,
    );
    this.probe = db.prepare<[{ now: number }], { one: number }>(
      `SELECT 1 AS one FROM hook_deliveries d INDEXED BY hook_deliveries_due WHERE ${hookCallDueSql('@now')} LIMIT 1`,
    );
    this.lease = db.prepare(
      'UPDATE hook_deliveries SET lease_owner = ?, lease_expires_at = ? WHERE run_id = ? AND event_seq = ? AND hook = ?',
    );
    this.done = db.prepare(
      `UPDATE hook_deliveries SET state = 'done', attempts = attempts + 1, lease_owner = NULL, lease_expires_at = NULL,
         last_error = NULL WHERE run_id = ? AND event_seq = ? AND hook = ?`,
    );
    this.retry = db.prepare(
      `UPDATE hook_deliveries SET state = ?, attempts = attempts + 1, due_at = ?, lease_owner = NULL,
         lease_expires_at = NULL, last_error = ? WHERE run_id = ? AND event_seq = ? AND hook = ?`,
    );
  }

  /** Whether any call is due now (a read through the partial index). */
  anyDue(now: number): boolean {
    return this.probe.get({ now }) !== undefined;
  }

  /** Call inside a write transaction. */
  claim(owner: string, now: number, leaseMs: number, limit: number): HookDelivery[] {
    const claimed: HookDelivery[] = [];
    for (const row of this.due.all({ now, limit })) {
      const plan = JSON.parse(row.plan_json) as Plan;
      const spec = plan.hooks?.[row.hook];
      if (!spec) continue;
      this.lease.run(owner, now + leaseMs, row.run_id, row.event_seq, row.hook);
      const event = {
        type: row.type,
        ...(JSON.parse(row.data_json) as object),
        seq: row.event_seq,
        runId: row.run_id,
        at: row.at,
      } as StoredEvent;
      claimed.push({
        runId: row.run_id,
        eventSeq: row.event_seq,
        hook: row.hook,
        attempts: row.attempts,
        spec,
        event: event as BatonEvent & StoredEvent,
        planName: row.plan_name,
        runStatus: row.status as RunStatus,
        blockedReason: row.blocked_reason,
        secretEnv: planSecretEnv(plan),
      });
    }
    return claimed;
  }

  finish(
    key: HookDeliveryKey,
    result: { ok: true } | { ok: false; error: string; retryAt: number | null },
  ): void {
    if (result.ok) {
      this.done.run(key.runId, key.eventSeq, key.hook);
      return;
    }
    const state = result.retryAt === null ? 'failed' : 'pending';
    this.retry.run(state, result.retryAt ?? 0, result.error.slice(0, 500), key.runId, key.eventSeq, key.hook);
  }
}
