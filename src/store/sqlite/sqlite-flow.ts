import { FlowGate, type FlowLimit } from '../../core/flow.js';
import { LEASED_STEP_SQL, stoppingAttemptSql } from '../lease-rules.js';
import type { FlowLimitStatus } from '../store.js';
import { flowKeyState, flowLimitStatus } from '../store-rows.js';
import type { SqliteDatabase } from './open-database.js';

interface FlowRow {
  key: string;
  concurrency: number | null;
  rate_count: number | null;
  rate_window_ms: number | null;
  starts_json: string;
  updated_at: number;
  running: number;
}

/**
 * The flow limits of the SQLite store. Writers are serialized (BEGIN IMMEDIATE), so a cycle reads
 * the limits, the attempts running under each key and the recent starts once, admits claims
 * against them in memory, and writes the starts back in the same transaction.
 */
export class SqliteFlow {
  private readonly selectAll;
  private readonly updateStarts;
  private readonly upsert;
  private readonly remove;
  private readonly declareLimit;

  constructor(db: SqliteDatabase) {
    // The running attempts counted once per cycle, grouped by key, not once per key: what runs now
    // is few (steps_leased), and a plan's keyed flow (`flow:`) may store a limit per customer.
    this.selectAll = db.prepare<[number], FlowRow>(
      `WITH running AS (
         SELECT s.flow_key AS key, count(*) AS n FROM steps s INDEXED BY steps_leased
         WHERE ${LEASED_STEP_SQL} GROUP BY s.flow_key
         UNION ALL
         SELECT s.flow_key, count(*) FROM steps s INDEXED BY steps_stopping_flow
         WHERE ${stoppingAttemptSql('?')} GROUP BY s.flow_key)
       SELECT f.key, f.concurrency, f.rate_count, f.rate_window_ms, f.starts_json, f.updated_at,
         coalesce((SELECT sum(r.n) FROM running r WHERE r.key = f.key), 0) AS running
       FROM flow_limits f ORDER BY f.key`,
    );
    this.updateStarts = db.prepare('UPDATE flow_limits SET starts_json = ? WHERE key = ?');
    this.upsert = db.prepare(
      `INSERT INTO flow_limits (key, concurrency, rate_count, rate_window_ms, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET concurrency = excluded.concurrency, rate_count = excluded.rate_count,
         rate_window_ms = excluded.rate_window_ms, updated_at = excluded.updated_at`,
    );
    this.remove = db.prepare('DELETE FROM flow_limits WHERE key = ?');
    this.declareLimit = db.prepare(
      `INSERT INTO flow_limits (key, concurrency, rate_count, rate_window_ms, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key) DO NOTHING`,
    );
  }

  /** The gate of one cycle (inside its transaction), or null when no limit is set. */
  gate(now: number): FlowGate | null {
    const rows = this.selectAll.all(now);
    if (rows.length === 0) return null;
    return new FlowGate(
      rows.map((row) => flowKeyState({ ...row, starts: JSON.parse(row.starts_json) as number[] })),
      now,
    );
  }

  /** Writes the starts a cycle's claims added (inside its transaction). */
  saveStarts(gate: FlowGate | null): void {
    for (const { key, starts } of gate?.changedStarts() ?? [])
      this.updateStarts.run(JSON.stringify(starts), key);
  }

  /** Limits plans declared (`flow:`) for keys without one (a cycle's, in its transaction); one set stays. */
  declare(limits: Iterable<FlowLimit>, now: number): void {
    for (const limit of limits)
      this.declareLimit.run(
        limit.key,
        limit.concurrency,
        limit.rate?.count ?? null,
        limit.rate?.windowMs ?? null,
        now,
      );
  }

  set(limit: FlowLimit, now: number): void {
    this.upsert.run(
      limit.key,
      limit.concurrency,
      limit.rate?.count ?? null,
      limit.rate?.windowMs ?? null,
      now,
    );
  }

  delete(key: string): boolean {
    return this.remove.run(key).changes > 0;
  }

  list(now: number): FlowLimitStatus[] {
    return this.selectAll
      .all(now)
      .map((row) =>
        flowLimitStatus(
          flowKeyState({ ...row, starts: JSON.parse(row.starts_json) as number[] }),
          row.updated_at,
          now,
        ),
      );
  }
}
