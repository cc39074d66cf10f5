import type { Statement } from 'better-sqlite3';
import { dueStepOfRunningRunSql } from '../due-steps.js';
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
import type { SqliteDatabase } from './open-database.js';

type Prepare = <P extends unknown[], R>(text: string) => Statement<P, R>;

/**
 * `Store.metricsSnapshot` on SQLite, in one read transaction: runs per status from `run_counts`
 * (kept by triggers), steps of unfinished runs through `runs_by_status`, due work through
 * `steps_due`, expired leases through `steps_leased`, hook calls owed and given up through
 * `hook_deliveries_due` and `hook_deliveries_failed`, attempts ended by a range of the events' key,
 * and the usage of those attempts through the attempts' key (each event names its attempt).
 */
export function sqliteMetricsSnapshot(
  db: SqliteDatabase,
  sql: Prepare,
  query: MetricsQuery,
): MetricsSnapshot {
  return db.transaction(() => {
    const runs = sql<[], StatusCountRow>('SELECT status, n FROM run_counts').all();
    const steps = sql<[], StatusCountRow>(
      `SELECT s.status, count(*) AS n FROM runs r JOIN steps s ON s.run_id = r.id
       WHERE r.status IN ${UNFINISHED_RUN_SQL} GROUP BY s.status`,
    ).all();
    const due = sql<[number], { n: number; oldest: number | null }>(
      `SELECT count(*) AS n, min(s.due_at) AS oldest FROM steps s INDEXED BY steps_due
       WHERE ${dueStepOfRunningRunSql('?')}`,
    ).get(query.now)!;
    const expired = sql<[number], { n: number }>(
      `SELECT count(*) AS n FROM steps s INDEXED BY steps_leased WHERE ${leaseExpiredSql('?')}`,
    ).get(query.now)!;
    const owed = sql<[], { pending: number | null; retrying: number | null }>(
      `SELECT sum(attempts = 0) AS pending, sum(attempts > 0) AS retrying
       FROM hook_deliveries INDEXED BY hook_deliveries_due WHERE state = 'pending'`,
    ).get()!;
    const failed = sql<[], { n: number }>(
      "SELECT count(*) AS n FROM hook_deliveries INDEXED BY hook_deliveries_failed WHERE state = 'failed'",
    ).get()!;
    const last = sql<[], { seq: number | null }>('SELECT max(seq) AS seq FROM events').get()?.seq ?? 0;
    const { afterSeq, upToSeq } = query.events;
    const ended =
      upToSeq > afterSeq
        ? sql<[number, number], AttemptEndRow>(
            `SELECT type, json_extract(data_json, '$.failureClass') AS failure_class, count(*) AS n,
               sum(type = 'step.failed' AND json_extract(data_json, '$.message') LIKE ${LEASE_RECLAIMED_MESSAGE_LIKE}) AS reclaims,
               sum(type = 'step.failed' AND ${stalledMessageSql("json_extract(data_json, '$.message')")}) AS stalls
             FROM events WHERE seq > ? AND seq <= ? AND type IN (${ATTEMPT_END_EVENTS_SQL})
             GROUP BY type, failure_class`,
          ).all(afterSeq, upToSeq)
        : [];
    const usage =
      upToSeq > afterSeq
        ? sql<[number, number], UsageEndRow>(
            `SELECT r.plan_hash, min(e.run_id) AS run_id, e.step_id,
               CASE WHEN s.on_fallback THEN coalesce(${fellBackSql('events')}, 0) ELSE 0 END AS fell_back,
               count(*) AS n, sum(a.input_tokens) AS input_tokens, sum(a.output_tokens) AS output_tokens,
               sum(a.cost_usd) AS cost_usd
             FROM events e
             JOIN attempts a ON a.run_id = e.run_id AND a.step_id = e.step_id
               AND a.attempt = json_extract(e.data_json, '$.attempt')
             JOIN runs r ON r.id = e.run_id
             JOIN steps s ON s.run_id = e.run_id AND s.step_id = e.step_id
             WHERE e.seq > ? AND e.seq <= ? AND e.type IN (${ATTEMPT_END_EVENTS_SQL})
               AND a.input_tokens IS NOT NULL
             GROUP BY r.plan_hash, e.step_id, fell_back`,
          ).all(afterSeq, upToSeq)
        : [];
    return {
      runs: countsByStatus(runs),
      steps: countsByStatus(steps),
      dueSteps: due.n,
      oldestDueAt: due.oldest,
      expiredLeases: expired.n,
      hookDeliveries: { pending: owed.pending ?? 0, retrying: owed.retrying ?? 0, failed: failed.n },
      lastEventSeq: last,
      ...endedAttempts(ended),
      usageEnded: endedUsage(usage),
    };
  })();
}
