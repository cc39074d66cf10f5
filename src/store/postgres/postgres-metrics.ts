import { RUN_STATUSES } from '../../core/run-state.js';
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
 * and expired leases among them) through `runs_by_status` and the steps' key; hook calls owed and
 * given up through `hook_deliveries_due` and `hook_deliveries_failed`; attempts ended by a range of
 * the events' key.
 */
export async function postgresMetricsSnapshot(
  pool: PgPool,
  s: string,
  query: MetricsQuery,
): Promise<MetricsSnapshot> {
  return inTransaction(pool, async (client) => {
    await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // One index-only count per status (runs_by_status): no scan of the runs' rows.
    const runs = await client.query<StatusCountRow>(
      `SELECT st.status, (SELECT count(*) FROM ${s}.runs r WHERE r.status = st.status) AS n
       FROM unnest($1::text[]) AS st (status)`,
      [RUN_STATUSES],
    );
    // The steps of each unfinished run through the steps' key (OFFSET 0 keeps the subquery a
    // loop per run: joined, the planner would scan every step of the history).
    const due = `r.status = 'running' AND ${dueStepSql('$1')}`;
    const steps = await client.query<StepMetricsRow>(
      `SELECT s.status, count(*) AS n, count(*) FILTER (WHERE ${due}) AS due,
         min(s.due_at) FILTER (WHERE ${due}) AS oldest,
         count(*) FILTER (WHERE s.status = 'running' AND s.lease_expires_at <= $1) AS expired
       FROM ${s}.runs r CROSS JOIN LATERAL (
         SELECT status, due_at, lease_expires_at FROM ${s}.steps WHERE run_id = r.id OFFSET 0) s
       WHERE r.status IN (${UNFINISHED_RUN_STATUSES_SQL}) GROUP BY s.status`,
      [query.now],
    );
    const hooks = await client.query<{ pending: number; retrying: number; failed: number }>(
      `SELECT count(*) FILTER (WHERE attempts = 0) AS pending, count(*) FILTER (WHERE attempts > 0) AS retrying,
         (SELECT count(*) FROM ${s}.hook_deliveries WHERE state = 'failed') AS failed
       FROM ${s}.hook_deliveries WHERE state = 'pending'`,
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
      hookDeliveries: {
        pending: Number(hookRow.pending),
        retrying: Number(hookRow.retrying),
        failed: Number(hookRow.failed),
      },
      lastEventSeq: last.rows[0]?.seq ?? 0,
      ...endedAttempts(ended),
    };
  });
}
