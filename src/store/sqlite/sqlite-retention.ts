import type { FinishedRunsBatch } from '../store.js';
import type { SqliteDatabase } from './open-database.js';

/** `PRAGMA auto_vacuum`'s value for INCREMENTAL. */
const INCREMENTAL = 2;

/**
 * `baton gc` in the SQLite store: finished runs to remove, in batches, the result artifacts still
 * referenced, and the space the removed rows leave.
 */
export class SqliteRetention {
  private readonly finished;
  private readonly remove;
  private readonly references;

  constructor(private readonly db: SqliteDatabase) {
    // In id order from a cursor: each batch reads on from where the last one stopped, along the
    // primary key (`+status` keeps the planner off runs_by_status, which would read every finished
    // run and sort them for each batch).
    this.finished = db
      .prepare<[string, number, number], string>(
        `SELECT id FROM runs WHERE id > ? AND +status IN ('succeeded', 'failed', 'cancelled') AND finished_at < ?
         ORDER BY id LIMIT ?`,
      )
      .pluck();
    // The same runs, as one statement over the batch's id range (in the transaction that found
    // them, so exactly those): about a third faster than a statement per run. Steps, attempts,
    // events, effects and owed hook calls go with their run (ON DELETE CASCADE).
    this.remove = db.prepare<[string, string, number]>(
      `DELETE FROM runs WHERE id > ? AND id <= ? AND +status IN ('succeeded', 'failed', 'cancelled') AND finished_at < ?`,
    );
    // Step results ({ ref }) and effect results ({ $artifact }, see engine/result-artifacts.ts).
    this.references = db
      .prepare<[], string>(
        `SELECT json_extract(result_json, '$.ref.sha256') FROM steps
         WHERE result_json LIKE '%"ref"%' AND json_extract(result_json, '$.ref.sha256') IS NOT NULL
         UNION SELECT json_extract(result_json, '$."$artifact".sha256') FROM effects
         WHERE result_json LIKE '{"$artifact":%' AND json_extract(result_json, '$."$artifact".sha256') IS NOT NULL`,
      )
      .pluck();
  }

  /** Call inside a write transaction. The pages the rows held go on the freelist, for later rows. */
  deleteFinishedRuns(before: number, dryRun: boolean, batch: FinishedRunsBatch): string[] {
    const afterId = batch.afterId ?? '';
    const ids = this.finished.all(afterId, before, batch.limit ?? -1);
    if (!dryRun && ids.length > 0) this.remove.run(afterId, ids[ids.length - 1]!, before);
    return ids;
  }

  /**
   * Call inside a write transaction: gives up to `pages` free pages back to the file system
   * (`incremental_vacuum`, which moves pages from the end of the file into free ones and truncates
   * it; a no-op unless the database has auto_vacuum=INCREMENTAL, which new databases have and
   * `rewrite()` gives older ones). Returns how many free pages are left to give back (0 without
   * auto_vacuum=INCREMENTAL: those pages stay for later rows).
   */
  returnFreePages(pages: number): number {
    if (this.db.pragma('auto_vacuum', { simple: true }) !== INCREMENTAL) return 0;
    this.db.pragma(`incremental_vacuum(${Math.max(1, Math.floor(pages))})`);
    return this.db.pragma('freelist_count', { simple: true }) as number;
  }

  referencedResultArtifacts(): Set<string> {
    return new Set(this.references.all());
  }

  /**
   * `baton gc --vacuum`: rewrites the file without its free pages, and switches a database made
   * before schema 6 to auto_vacuum=INCREMENTAL (a mode that takes effect only through VACUUM).
   * Outside any transaction; needs as much free disk as the database's size, and holds off other
   * writers while it runs.
   */
  rewrite(): void {
    this.db.pragma('auto_vacuum = INCREMENTAL');
    this.db.exec('VACUUM');
  }
}
