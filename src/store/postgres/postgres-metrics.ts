import { RUN_STATUSES } from '../../core/run-state.js';
import { dueStepSql } from '../due-steps.js';
import { leaseExpiredSql } from '../lease-rules.js';
import {
  ATTEMPT_END_EVENTS_SQL,
  type AttemptEndRow,
  countsByStatus,
  endedAttempts,
  endedUsage,
  fellBackSql,
  LEASE_RECLAIMED_MESSAGE_LIKE,
  type StatusCountRow,
  stalledMessageSql,
  type UsageEndRow,
} from '../metrics-rows.js';
import type { MetricsQuery, MetricsSnapshot } from '../store.js';
import { UNFINISHED_RUN_SQL } from '../unfinished-runs.js';
import type { PgPool } from './open-pool.js';

interface StepMetricsRow extends StatusCountRow {
  due: number;
  oldest: number | null;
  expired: number;
}

interface MetricsRow {
  runs: StatusCountRow[];
  steps: StepMetricsRow[] | null;
  pending: number;
  retrying: number;
  failed: number;
  last: number | null;
  ended: AttemptEndRow[] | null;
  usage: UsageEndRow[] | null;
}

/**
 * `Store.metricsSnapshot` on PostgreSQL: one statement, so one snapshot and one round trip. Runs
 * per status counted in `runs_by_status` (index only); the steps of unfinished runs (their due work
 * and expired leases among them) read per run through the steps' key (`OFFSET 0` keeps the
 * subquery a loop per run: joined, the planner would scan every step of the history); hook calls
 * owed and given up through `hook_deliveries_due` and `hook_deliveries_failed`; attempts ended by
 * a range of the events' key, and their usage through the attempts' key (each event names its
 * attempt; `OFFSET 0` again keeps it a lookup per event: joined, the planner would hash every
 * attempt of the history once the range holds a few thousand).
 */
export async function postgresMetricsSnapshot(
  pool: PgPool,
  s: string,
  query: MetricsQuery,
): Promise<MetricsSnapshot> {
  const due = `r.status = 'running' AND ${dueStepSql('$1')}`;
  const { rows } = await pool.query<MetricsRow>(
    `SELECT
       (SELECT json_agg(json_build_object('status', st.status,
          'n', (SELECT count(*) FROM ${s}.runs r WHERE r.status = st.status)))
        FROM unnest($2::text[]) AS st (status)) AS runs,
       (SELECT json_agg(x) FROM (
          SELECT s.status, count(*) AS n, count(*) FILTER (WHERE ${due}) AS due,
            min(s.due_at) FILTER (WHERE ${due}) AS oldest,
            count(*) FILTER (WHERE ${leaseExpiredSql('$1')}) AS expired
          FROM ${s}.runs r CROSS JOIN LATERAL (
            SELECT status, due_at, lease_expires_at FROM ${s}.steps WHERE run_id = r.id OFFSET 0) s
          WHERE r.status IN ${UNFINISHED_RUN_SQL} GROUP BY s.status) x) AS steps,
       (SELECT count(*) FROM ${s}.hook_deliveries WHERE state = 'pending' AND attempts = 0) AS pending,
       (SELECT count(*) FROM ${s}.hook_deliveries WHERE state = 'pending' AND attempts > 0) AS retrying,
       (SELECT count(*) FROM ${s}.hook_deliveries WHERE state = 'failed') AS failed,
       (SELECT max(seq) FROM ${s}.events) AS last,
       (SELECT json_agg(x) FROM (
          SELECT type, data->>'failureClass' AS failure_class, count(*) AS n,
            count(*) FILTER (WHERE type = 'step.failed'
              AND data->>'message' LIKE ${LEASE_RECLAIMED_MESSAGE_LIKE}) AS reclaims,
            count(*) FILTER (WHERE type = 'step.failed'
              AND ${stalledMessageSql("data->>'message'")}) AS stalls
          FROM ${s}.events WHERE seq > $3 AND seq <= $4 AND type IN (${ATTEMPT_END_EVENTS_SQL})
          GROUP BY type, failure_class) x) AS ended,
       (SELECT json_agg(x) FROM (
          SELECT u.plan_hash, min(e.run_id) AS run_id, e.step_id,
            CASE WHEN u.on_fallback THEN coalesce(${fellBackSql(`${s}.events`)}, false) ELSE false END AS fell_back,
            count(*) AS n, sum(u.input_tokens) AS input_tokens, sum(u.output_tokens) AS output_tokens,
            sum(u.cost_usd) AS cost_usd
          FROM ${s}.events e CROSS JOIN LATERAL (
            SELECT r.plan_hash, st.on_fallback, a.input_tokens, a.output_tokens, a.cost_usd
            FROM ${s}.attempts a JOIN ${s}.runs r ON r.id = a.run_id
              JOIN ${s}.steps st ON st.run_id = a.run_id AND st.step_id = a.step_id
            WHERE a.run_id = e.run_id AND a.step_id = e.step_id AND a.attempt = (e.data->>'attempt')::integer
              AND a.input_tokens IS NOT NULL OFFSET 0) u
          WHERE e.seq > $3 AND e.seq <= $4 AND e.type IN (${ATTEMPT_END_EVENTS_SQL})
          GROUP BY u.plan_hash, e.step_id, fell_back) x) AS usage`,
    [query.now, RUN_STATUSES, query.events.afterSeq, query.events.upToSeq],
  );
  const row = rows[0]!;
  let dueSteps = 0;
  let oldestDueAt: number | null = null;
  let expiredLeases = 0;
  for (const step of row.steps ?? []) {
    dueSteps += step.due;
    expiredLeases += step.expired;
    if (step.oldest !== null) oldestDueAt = Math.min(oldestDueAt ?? step.oldest, step.oldest);
  }
  return {
    runs: countsByStatus(row.runs),
    steps: countsByStatus(row.steps ?? []),
    dueSteps,
    oldestDueAt,
    expiredLeases,
    hookDeliveries: {
      pending: Number(row.pending),
      retrying: Number(row.retrying),
      failed: Number(row.failed),
    },
    lastEventSeq: row.last ?? 0,
    ...endedAttempts(row.ended ?? []),
    usageEnded: endedUsage(row.usage ?? []),
  };
}
