/**
 * The options of `SqliteStore.open`, in a module of their own: the public `.d.ts` of
 * `baton-steps/store` names them, and must not name better-sqlite3's types (which open-database.ts
 * does), so that a consumer type-checks without `@types/better-sqlite3`.
 */
export interface OpenSqliteOptions {
  /** `FULL` (default) fsyncs every commit; `NORMAL` may lose the last commits on power loss. */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long a writer waits for another process's transaction, in ms. Default 10 000. */
  busyTimeoutMs?: number;
}
