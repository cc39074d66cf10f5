/**
 * The options of `PostgresStore.open`, in a module of their own: the public `.d.ts` of
 * `baton-steps/store` names them, and must not name pg's types (which postgres-store.ts reaches
 * through its pool), so that a consumer type-checks without `@types/pg`.
 */
export interface OpenPostgresOptions {
  /** The schema holding Baton's tables, created if missing. Default `baton`. */
  schema?: string;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /**
   * Longest idle wait in `waitForWork` when no notification comes (ms): the safety net for
   * notifications lost unseen. Timers are not polled for: a wait ends at the next due time. Default 30 000.
   */
  pollMs?: number;
}
