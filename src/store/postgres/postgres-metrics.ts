import { dueStepSql } from '../due-steps.js';
import {
  ATTEMPT_END_EVENTS_SQL,
  type AttemptEndRow,
  countsByStatus,
  endedAttempts,
  LEASE_RECLAIMED_MESSAGE_LIKE,
  type StatusCountRow,
  UNFINISHED_RUN_STATUSES_SQL,
} from '../metrics-rows.js';
import type { MetricsQuery, MetricsSnapshot } from '../store.js';
import type { PgPool } from './open-pool.js';
import { inTransaction } from './transaction.js';

interface StepMetricsRow extends StatusCountRow {
  due: number | string;
  oldest: number | null;
  expired: number | string;
}

/**
 * `Store.metricsSnapshot` on PostgreSQL, in one read-only REPEATABLE READ transaction (one
 * snapshot): runs per status from `runs_by_status`; the steps of unfinished runs (their due work
 * and expired leases among them) through `runs_by_status` and the steps' key; attempts ended by a
 * range of the events' key. Only hook deliveries are read whole (one row per hook call owed).
 */
export async function postgresMetricsSnapshot(
  pool: PgPool,
  s: string,
  query: MetricsQuery,
): Promise<MetricsSnapshot> {
  return inTransaction(pool, async (client) => {
    await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const runs = await client.query<StatusCountRow>(
      `SELECT status, count(*) AS n FROM ${s}.runs GROUP BY status`,
    );
    const due = `r.status = 'running' AND ${dueStepSql('$1')}`;
    const steps = await client.query<StepMetricsRow>(
      `SELECT s.status, count(*) AS n, count(*) FILTER (WHERE ${due}) AS due,
         min(s.due_at) FILTER (WHERE ${due}) AS oldest,
         count(*) FILTER (WHERE s.status = 'running' AND s.lease_expires_at <= $1) AS expired
       FROM ${s}.runs r JOIN ${s}.steps s ON s.run_id = r.id
       WHERE r.status IN (${UNFINISHED_RUN_STATUSES_SQL}) GROUP BY s.status`,
      [query.now],
    );
    const hooks = await client.query<{ pending: number; failed: number; failures: number | null }>(
      `SELECT count(*) FILTER (WHERE state = 'pending') AS pending,
         count(*) FILTER (WHERE state = 'failed') AS failed,
         sum(attempts) - count(*) FILTER (WHERE state = 'done') AS failures
       FROM ${s}.hook_deliveries`,
    );
    const last = await client.query<{ seq: number | null }>(`SELECT max(seq) AS seq FROM ${s}.events`);
    const { afterSeq, upToSeq } = query.events;
    const ended =
      upToSeq > afterSeq
        ? (
            await client.query<AttemptEndRow>(
              `SELECT type, data->>'failureClass' AS failure_class, count(*) AS n,
                 count(*) FILTER (WHERE type = 'step.failed'
                   AND data->>'message' LIKE ${LEASE_RECLAIMED_MESSAGE_LIKE}) AS reclaims
               FROM ${s}.events WHERE seq > $1 AND seq <= $2 AND type IN (${ATTEMPT_END_EVENTS_SQL})
               GROUP BY type, failure_class`,
              [afterSeq, upToSeq],
            )
          ).rows
        : [];
    let dueSteps = 0;
    let oldestDueAt: number | null = null;
    let expiredLeases = 0;
    for (const row of steps.rows) {
      dueSteps += Number(row.due);
      expiredLeases += Number(row.expired);
      if (row.oldest !== null) oldestDueAt = Math.min(oldestDueAt ?? row.oldest, row.oldest);
    }
    const hookRow = hooks.rows[0]!;
    return {
      runs: countsByStatus(runs.rows),
      steps: countsByStatus(steps.rows),
      dueSteps,
      oldestDueAt,
      expiredLeases,
      hookDeliveries: { pending: Number(hookRow.pending), failed: Number(hookRow.failed) },
      hookCallFailures: Number(hookRow.failures ?? 0),
      lastEventSeq: last.rows[0]?.seq ?? 0,
      ...endedAttempts(ended),
    };
  });
}
