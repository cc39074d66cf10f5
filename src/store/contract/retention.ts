// What `baton gc` asks of the Store contract: finished runs deleted in bounded batches, their space
// given back, the result artifacts still referenced. Contract suite: test/store-contract.ts
// ("retention"), test/store-history.test.ts.

export interface RetentionStore {
  /**
   * `baton gc`: deletes runs that finished (succeeded, failed, cancelled) before `before`, with their
   * steps, attempts, events and records; returns their ids, in id order. Blocked runs wait for a
   * human: kept. With `limit`, one batch in its own transaction: at most `limit` runs with ids after
   * `afterId` (pass the last id of the batch before), so memory and transactions stay bounded.
   */
  deleteFinishedRuns(before: number, options?: { dryRun?: boolean } & FinishedRunsBatch): Promise<string[]>;
  /**
   * After `baton gc`: gives the space of deleted rows back. SQLite returns the free pages to the
   * file system (incremental_vacuum, a bounded transaction at a time; a database made before
   * schema 6 keeps them for later rows); PostgreSQL leaves it to autovacuum. `full` (`baton gc
   * --vacuum`): SQLite VACUUM, which also switches an older database to auto_vacuum=INCREMENTAL;
   * PostgreSQL VACUUM of Baton's tables.
   */
  vacuum(options?: { full?: boolean }): Promise<void>;
  /** The sha256 of every result artifact a stored step still references. */
  referencedResultArtifacts(): Promise<Set<string>>;
}

/** One batch of `deleteFinishedRuns`. */
export interface FinishedRunsBatch {
  /** At most this many runs (default: all). */
  limit?: number;
  /** Only runs whose id sorts after this one (default: from the first). */
  afterId?: string;
}
