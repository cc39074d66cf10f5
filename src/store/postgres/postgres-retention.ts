import { RUN_TABLES } from '../schema-tables.js';
import type { FinishedRunsBatch } from '../store.js';
import type { PgPool } from './open-pool.js';

/**
 * `baton gc` in the PostgreSQL store: finished runs to remove, in batches, and the result artifacts
 * still referenced. The space of deleted rows is reused once (auto)vacuum has seen it.
 */
export class PostgresRetention {
  constructor(
    private readonly pool: PgPool,
    /** The quoted schema name. */
    private readonly schema: string,
  ) {}

  /** Runs finished before `before` (their rows go with them through ON DELETE CASCADE), in id order from a cursor. */
  async deleteFinishedRuns(before: number, dryRun: boolean, batch: FinishedRunsBatch): Promise<string[]> {
    const select = `SELECT id FROM ${this.schema}.runs
      WHERE id > $2 AND status IN ('succeeded', 'failed', 'cancelled') AND finished_at < $1 ORDER BY id LIMIT $3`;
    const { rows } = await this.pool.query<{ id: string }>(
      dryRun ? select : `DELETE FROM ${this.schema}.runs WHERE id IN (${select}) RETURNING id`,
      [before, batch.afterId ?? '', batch.limit ?? null],
    );
    return rows.map((row) => row.id).sort();
  }

  async referencedResultArtifacts(): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ sha: string }>(
      // Step results ({ ref }) and effect results ({ $artifact }, see engine/result-artifacts.ts).
      `SELECT result->'ref'->>'sha256' AS sha FROM ${this.schema}.steps WHERE result->'ref'->>'sha256' IS NOT NULL
       UNION SELECT result->'$artifact'->>'sha256' FROM ${this.schema}.effects
       WHERE result->'$artifact'->>'sha256' IS NOT NULL`,
    );
    return new Set(rows.map((row) => row.sha));
  }

  /**
   * `baton gc --vacuum`: VACUUM of the run tables now rather than when autovacuum comes by (not
   * VACUUM FULL, which would lock them against the workers while it rewrites them).
   */
  async vacuum(): Promise<void> {
    await this.pool.query(`VACUUM ${RUN_TABLES.map((table) => `${this.schema}.${table}`).join(', ')}`);
  }
}
