import type { FinishedRunsBatch } from '../store.js';
import type { SqliteDatabase } from './open-database.js';

/**
 * `baton gc` in the SQLite store: finished runs to remove, in batches, the result artifacts still
 * referenced, and the space the removed rows leave.
 */
export class SqliteRetention {
  private readonly finished;
  private readonly remove;
  private readonly references;

  constructor(private readonly db: SqliteDatabase) {
    // In id order from a cursor: each batch reads on from where the last one stopped.
    this.finished = db
      .prepare<[string, number, number], string>(
        `SELECT id FROM runs WHERE id > ? AND status IN ('succeeded', 'failed', 'cancelled') AND finished_at < ?
         ORDER BY id LIMIT ?`,
      )
      .pluck();
    // Steps, attempts, events, effects and owed hook calls go with their run (ON DELETE CASCADE).
    this.remove = db.prepare('DELETE FROM runs WHERE id = ?');
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

  /**
   * Call inside a write transaction. Then the pages the rows held go back to the file system
   * (`incremental_vacuum`; a no-op unless the database has auto_vacuum=INCREMENTAL, which new
   * databases have and `vacuum()` gives older ones); without it they would stay on the freelist
   * for later rows to reuse.
   */
  deleteFinishedRuns(before: number, dryRun: boolean, batch: FinishedRunsBatch): string[] {
    const ids = this.finished.all(batch.afterId ?? '', before, batch.limit ?? -1);
    if (!dryRun && ids.length > 0) {
      for (const id of ids) this.remove.run(id);
      this.db.pragma('incremental_vacuum');
    }
    return ids;
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
  vacuum(): void {
    this.db.pragma('auto_vacuum = INCREMENTAL');
    this.db.exec('VACUUM');
  }
}
