/**
 * When the lease of a step's attempt ran out, and when a cancelled attempt still takes its flow
 * slot, in SQL for both dialects and `baton check`'s idle read: each rule written here once (keep
 * this module free of imports; the idle read bundles it). The step row is `s`; `now` is a
 * parameter or an expression, used once. The same rule in memory: `leaseExpired` (core/run-state.ts).
 */

/** The step row `s` runs an attempt under a lease: the condition of the partial index steps_leased. */
export const LEASED_STEP_SQL = "s.status = 'running'";

/** The lease of the step row `s` ran out by `now`: its attempt is reclaimed (expireLease). */
export function leaseExpiredSql(now: string): string {
  return `${LEASED_STEP_SQL} AND s.lease_expires_at <= ${now}`;
}

/**
 * The step row `s` was cancelled while its attempt ran, and that attempt may run on until its lease
 * ends at its owner's next renewal: it still takes a slot of its flow key. The condition of the
 * partial index steps_stopping_flow, and a bound on `now`.
 */
export function stoppingAttemptSql(now: string): string {
  return `s.status = 'cancelled' AND s.lease_expires_at IS NOT NULL AND s.lease_expires_at > ${now}`;
}

/** The step row `s` takes a slot of its flow key at `now`: running, or stopping (stoppingAttemptSql). */
export function takesFlowSlotSql(now: string): string {
  return `(${LEASED_STEP_SQL} OR (${stoppingAttemptSql(now)}))`;
}
