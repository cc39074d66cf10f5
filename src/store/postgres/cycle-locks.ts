import { dueStepSql } from '../due-steps.js';
import { leaseExpiredSql, takesFlowSlotSql } from '../lease-rules.js';

/** Which part of a cycle locked a run; `flow` rows name a flow key with a limit (nothing locked). */
export type LockPhase = 'complete' | 'reclaim' | 'claim' | 'flow';

export interface CycleLockParams {
  /** Runs of the completions: waited for, locked in id order (so two waiters never deadlock). */
  completionRunIds: readonly string[];
  /** Leases that ran out by this time are looked for; null: not in this cycle. */
  reclaimBefore: number | null;
  reclaimLimit: number;
  /** At most how many runs with due work to lock (0: none). */
  claimRuns: number;
  now: number;
  runId: string | null;
  functions: readonly string[] | null;
  /** Runs already locked by this transaction. */
  exclude: readonly string[];
}

/**
 * Locks, in one statement, the runs a cycle will change: first the runs of its completions
 * (waiting for them), then runs with an expired lease and runs with due work, both with SKIP
 * LOCKED so that concurrent workers each take different runs and never wait for each other.
 * Holding a run's row lock is what entitles a transaction to change the run and its steps; their
 * state is read by a separate, later statement, which sees every commit made before the lock.
 *
 * Due work is found from run rows alone (`next_rank`, `next_due_at`, `running_count`, `concurrency`)
 * through the partial index runs_claim, so a claim reads what is due, in claim order (the lowest
 * claim rank first: higher priority, aged; core/priority.ts), and never history.
 * A run at its concurrency is locked only when a wait step of it is due (`next_wait_at`): a wait
 * starts and times out without a slot (CycleRuns.moveDueWaits), so it never waits for one.
 * Only a worker limited to some functions, or a database with flow keys at their limit, looks at
 * the due steps themselves: a run whose due steps are all held back by flow control is not locked,
 * so it never takes the place of claimable work. The statement also returns the flow keys that
 * have a limit (phase `flow`), which the cycle then locks before admitting claims under them.
 */
export function cycleLockSql(schema: string): string {
  return `WITH completing AS (
    SELECT r.id FROM ${schema}.runs r WHERE r.id = ANY ($1::text[]) ORDER BY r.id FOR NO KEY UPDATE
  ), expired AS (
    SELECT r.id FROM ${schema}.steps s JOIN ${schema}.runs r ON r.id = s.run_id
    WHERE $2::bigint IS NOT NULL AND ${leaseExpiredSql('$2::bigint')}
    ORDER BY s.lease_expires_at LIMIT $3::integer
    FOR NO KEY UPDATE OF r SKIP LOCKED
  ), saturated AS (
    SELECT f.key FROM ${schema}.flow_limits f
    WHERE $4::integer > 0 AND (
      -- Attempts of runs completing in this cycle may end in it: not counted (a filter only; the
      -- limit itself is enforced after locking the key).
      (f.concurrency IS NOT NULL AND f.concurrency <= (
        SELECT count(*) FROM ${schema}.steps s
        WHERE s.flow_key = f.key AND s.run_id <> ALL ($1::text[]) AND ${takesFlowSlotSql('$5::bigint')}))
      OR (f.rate_count IS NOT NULL AND f.rate_count <= (
        SELECT count(*) FROM unnest(f.starts) AS t (at) WHERE t.at > $5::bigint - f.rate_window_ms)))
  ), claimable AS (
    SELECT r.id FROM ${schema}.runs r
    WHERE r.status = 'running' AND r.next_rank <= $5::bigint AND r.next_due_at <= $5::bigint
      AND (r.running_count < r.concurrency OR r.next_wait_at <= $5::bigint)
      AND r.id <> ALL ($8::text[])
      AND ($6::text IS NULL OR r.id = $6::text)
      AND (($7::text[] IS NULL AND NOT EXISTS (SELECT 1 FROM saturated)) OR EXISTS (
        SELECT 1 FROM ${schema}.steps s
        WHERE s.run_id = r.id AND ${dueStepSql('$5::bigint')}
          AND ($7::text[] IS NULL OR s.fn IS NULL OR s.fn = ANY ($7::text[]))
          AND (s.flow_key IS NULL OR s.flow_key NOT IN (SELECT key FROM saturated))))
    ORDER BY r.next_rank, r.next_due_at, r.id LIMIT $4::integer
    FOR NO KEY UPDATE OF r SKIP LOCKED
  )
  SELECT id, 'complete' AS phase FROM completing
  UNION ALL SELECT id, 'reclaim' FROM expired
  UNION ALL SELECT id, 'claim' FROM claimable
  UNION ALL SELECT key, 'flow' FROM ${schema}.flow_limits`;
}

export function cycleLockValues(params: CycleLockParams): unknown[] {
  return [
    params.completionRunIds,
    params.reclaimBefore,
    params.reclaimLimit,
    params.claimRuns,
    params.now,
    params.runId,
    params.functions,
    params.exclude,
  ];
}

/** Locks flow-key rows and returns their limits (waiting for them, or skipping those held: `skipLocked`). */
export function flowLockSql(schema: string, skipLocked: boolean): string {
  return `SELECT key, concurrency, rate_count, rate_window_ms, starts FROM ${schema}.flow_limits
    WHERE key = ANY ($1::text[]) ORDER BY key FOR UPDATE${skipLocked ? ' SKIP LOCKED' : ''}`;
}

/**
 * Attempts running under each key (a cancelled one until its lease expires: its process may run
 * until its owner's next renewal). A separate statement after the lock: READ COMMITTED gives it a
 * snapshot that holds every claim committed by the key's previous holder.
 */
export function flowRunningSql(schema: string): string {
  return `SELECT s.flow_key AS key, count(*)::integer AS running FROM ${schema}.steps s
    WHERE s.flow_key = ANY ($1::text[]) AND ${takesFlowSlotSql('$2::bigint')}
    GROUP BY s.flow_key`;
}
