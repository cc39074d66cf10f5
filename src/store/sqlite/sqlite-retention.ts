import type { SqliteDatabase } from './open-database.js';

/** `baton gc` in the SQLite store: finished runs to remove, and the result artifacts still referenced. */
export class SqliteRetention {
  private readonly finished;
  private readonly remove;
  private readonly references;

  constructor(db: SqliteDatabase) {
    this.finished = db
      .prepare<[number], string>(
        "SELECT id FROM runs WHERE status IN ('succeeded', 'failed', 'cancelled') AND finished_at < ? ORDER BY id",
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

  /** Call inside a write transaction. */
  deleteFinishedRuns(before: number, dryRun: boolean): string[] {
    const ids = this.finished.all(before);
    if (!dryRun) for (const id of ids) this.remove.run(id);
    return ids;
  }

  referencedResultArtifacts(): Set<string> {
    return new Set(this.references.all());
  }
}
