import { existsSync, statSync } from 'node:fs';
import { BatonError } from '../../core/errors.js';
import type { Plan } from '../../core/plan/types.js';
import type { RunState, RunStatus } from '../../core/run-state.js';
import { BATON_TABLES, RUN_TABLES } from '../schema-tables.js';
import { latestSchemaVersion, type SqliteDatabase, schemaError } from '../sqlite/open-database.js';
import { type RunRow, stepFromRow } from '../sqlite/run-rows.js';
import { openSqliteFile } from '../sqlite/sqlite-driver.js';

/** The tables `baton migrate` copies, in the order it reports them. */
export const COPIED_TABLES = RUN_TABLES;

export type CopiedTable = (typeof COPIED_TABLES)[number];

/** Rows per table, for the runs being migrated. */
export type TableCounts = Record<CopiedTable, number>;

/** A run row as the SQLite store keeps it, with its plan snapshot. */
type SourceRunRow = RunRow & { plan_json: string };

type SourceStepRow = Parameters<typeof stepFromRow>[0] & {
  run_id: string;
  position: number;
  pid: number | null;
  host: string | null;
};

/** A run as stored, with its steps in plan order and the state the core sees. */
export interface SourceRun {
  row: SourceRunRow;
  steps: SourceStepRow[];
  state: RunState;
}

export interface SourceEventRow {
  seq: number;
  run_id: string;
  at: number;
  type: string;
  step_id: string | null;
  data_json: string;
  /** JSON array of the hook indexes owed for this event (its hook_deliveries rows). */
  hooks_json: string;
}

export type SourceRow = Record<string, unknown>;

/** One `?` filled with a JSON array of run ids, as an IN list. */
const IN_RUNS = 'run_id IN (SELECT value FROM json_each(?))';

/**
 * A Baton SQLite database opened read-only, for `baton migrate`: every read happens in one read
 * transaction, so counts and rows are one consistent snapshot even while other processes write.
 * Nothing is ever written to the file.
 */
export class SqliteCopySource {
  private constructor(
    private readonly db: SqliteDatabase,
    readonly path: string,
  ) {}

  /** Opens `path` read-only; refuses a missing file, a foreign one and a schema other than the latest. */
  static open(path: string): SqliteCopySource {
    if (!existsSync(path)) {
      throw new BatonError(
        'CONFIG_INVALID',
        `--from ${path}: no such file; give the baton.db of a Baton home (e.g. --from .baton/baton.db)`,
      );
    }
    if (statSync(path).isDirectory()) {
      throw new BatonError(
        'CONFIG_INVALID',
        `--from ${path}: is a directory; give the baton.db file inside it (e.g. --from ${path}/baton.db)`,
      );
    }
    let db: SqliteDatabase;
    try {
      db = openSqliteFile(path, { readonly: true, fileMustExist: true });
    } catch (error) {
      throw schemaError(path, error);
    }
    try {
      checkSchema(db, path);
      // Deferred: the snapshot is taken at the first read and kept until close().
      db.exec('BEGIN');
    } catch (error) {
      db.close();
      if (error instanceof BatonError) throw error;
      throw schemaError(path, error);
    }
    return new SqliteCopySource(db, path);
  }

  /** Every run id (oldest first), or `only` after checking that each one is stored. */
  runIds(only: readonly string[] | null): string[] {
    if (only === null) {
      return this.db.prepare('SELECT id FROM runs ORDER BY created_at, id').pluck().all() as string[];
    }
    const found = new Set(
      this.db
        .prepare('SELECT id FROM runs WHERE id IN (SELECT value FROM json_each(?))')
        .pluck()
        .all(JSON.stringify(only)) as string[],
    );
    const missing = only.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `--runs: ${listIds(missing)} not in ${this.path} (list its runs with: baton status --home <its folder>)`,
      );
    }
    return [...new Set(only)];
  }

  /** Rows of each table for these runs (`all`: every run in the file). */
  counts(runIds: readonly string[], all: boolean): TableCounts {
    const counts = {} as TableCounts;
    const ids = JSON.stringify(runIds);
    for (const table of COPIED_TABLES) {
      const column = table === 'runs' ? 'id' : 'run_id';
      const sql = all
        ? `SELECT count(*) FROM ${table}`
        : `SELECT count(*) FROM ${table} WHERE ${column} IN (SELECT value FROM json_each(?))`;
      const statement = this.db.prepare(sql).pluck();
      counts[table] = (all ? statement.get() : statement.get(ids)) as number;
    }
    return counts;
  }

  /** The runs, their plans and their steps (in plan order), with the state the core reads from them. */
  runs(runIds: readonly string[]): SourceRun[] {
    const ids = JSON.stringify(runIds);
    const rows = this.db
      .prepare(
        `SELECT r.*, p.plan_json FROM runs r JOIN run_plans p ON p.run_id = r.id
         WHERE r.id IN (SELECT value FROM json_each(?)) ORDER BY r.created_at, r.id`,
      )
      .all(ids) as SourceRunRow[];
    const stepsByRun = new Map<string, SourceStepRow[]>();
    const steps = this.db
      .prepare(`SELECT * FROM steps WHERE ${IN_RUNS} ORDER BY run_id, position`)
      .all(ids) as SourceStepRow[];
    for (const step of steps) {
      const list = stepsByRun.get(step.run_id) ?? [];
      list.push(step);
      stepsByRun.set(step.run_id, list);
    }
    return rows.map((row) => {
      const runSteps = stepsByRun.get(row.id) ?? [];
      const state: RunState = {
        id: row.id,
        status: row.status as RunStatus,
        plan: JSON.parse(row.plan_json) as Plan,
        attemptsTotal: row.attempts_total,
        blockedReason: row.blocked_reason,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        finishedAt: row.finished_at,
        steps: runSteps.map(stepFromRow),
      };
      return { row, steps: runSteps, state };
    });
  }

  /** All rows of `table` (attempts, artifacts, effects, kept events or labels) for these runs. */
  rowsOf(
    table: 'attempts' | 'artifacts' | 'effects' | 'wait_events' | 'run_labels',
    runIds: readonly string[],
  ): SourceRow[] {
    return this.db
      .prepare(`SELECT * FROM ${table} WHERE ${IN_RUNS}`)
      .all(JSON.stringify(runIds)) as SourceRow[];
  }

  /** The flow limits set in the file (configuration, not per run; `baton flow set`). */
  flowLimits(): SourceRow[] {
    return this.db
      .prepare(
        'SELECT key, concurrency, rate_count, rate_window_ms, updated_at FROM flow_limits ORDER BY key',
      )
      .all() as SourceRow[];
  }

  /** The schedules and their slot history (configuration and its record, not per run; `baton schedule add`). */
  schedules(): { schedules: SourceRow[]; slots: SourceRow[] } {
    return {
      schedules: this.db.prepare('SELECT * FROM schedules ORDER BY name').all() as SourceRow[],
      slots: this.db
        .prepare('SELECT * FROM schedule_slots ORDER BY schedule, manual, slot_at')
        .all() as SourceRow[],
    };
  }

  /** Up to `limit` events after `afterSeq`, in seq order, of these runs (null: of every run). */
  eventsAfter(afterSeq: number, runIds: readonly string[] | null, limit: number): SourceEventRow[] {
    const filter = runIds === null ? '' : `AND e.${IN_RUNS}`;
    const params: unknown[] = runIds === null ? [afterSeq, limit] : [afterSeq, JSON.stringify(runIds), limit];
    return this.db
      .prepare(
        `SELECT e.seq, e.run_id, e.at, e.type, e.step_id, e.data_json,
           (SELECT json_group_array(d.hook) FROM hook_deliveries d
            WHERE d.run_id = e.run_id AND d.event_seq = e.seq) AS hooks_json
         FROM events e WHERE e.seq > ? ${filter} ORDER BY e.seq LIMIT ?`,
      )
      .all(...params) as SourceEventRow[];
  }

  /** The hook deliveries of the events from `firstSeq` to `lastSeq` of these runs (null: of every run). */
  deliveriesOf(firstSeq: number, lastSeq: number, runIds: readonly string[] | null): SourceRow[] {
    const filter = runIds === null ? '' : `AND e.${IN_RUNS}`;
    const params: unknown[] =
      runIds === null ? [firstSeq, lastSeq] : [firstSeq, lastSeq, JSON.stringify(runIds)];
    return this.db
      .prepare(
        `SELECT d.* FROM events e JOIN hook_deliveries d ON d.run_id = e.run_id AND d.event_seq = e.seq
         WHERE e.seq BETWEEN ? AND ? ${filter}`,
      )
      .all(...params) as SourceRow[];
  }

  close(): void {
    if (this.db.inTransaction) this.db.exec('COMMIT');
    this.db.close();
  }
}

/** `a, b, c` for up to 5 ids, then how many more. */
export function listIds(ids: readonly string[]): string {
  const shown = ids.slice(0, 5).join(', ');
  return ids.length > 5 ? `${shown} and ${ids.length - 5} more` : shown;
}

/** Refuses a file that is not a Baton database of exactly the newest schema this code knows. */
function checkSchema(db: SqliteDatabase, path: string): void {
  const tables = new Set(
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[],
  );
  if (!tables.has('baton_meta')) {
    const found = tables.size === 0 ? 'it has no tables' : `tables: ${[...tables].slice(0, 5).join(', ')}`;
    throw new BatonError(
      'DB_CORRUPT',
      `--from ${path}: not a Baton database (${found}); give the baton.db of a Baton home. Nothing was changed.`,
    );
  }
  const meta = new Map(
    (db.prepare('SELECT key, value FROM baton_meta').all() as { key: string; value: string }[]).map((row) => [
      row.key,
      row.value,
    ]),
  );
  const version = meta.get('schema_version');
  if (meta.get('app') !== 'baton' || version === undefined || !/^\d+$/.test(version)) {
    throw new BatonError(
      'DB_CORRUPT',
      `--from ${path}: the Baton metadata is damaged (app=${meta.get('app') ?? 'missing'}, schema_version=${version ?? 'missing'}). Nothing was changed.`,
    );
  }
  const latest = latestSchemaVersion();
  if (Number(version) !== latest) {
    const fix =
      Number(version) < latest
        ? 'upgrade it first by running any command of this Baton on its folder (e.g. baton status --home <its folder>), then migrate again'
        : 'use the Baton that wrote it';
    throw new BatonError(
      'CONFIG_INVALID',
      `--from ${path}: schema version ${version}, but this Baton migrates only version ${latest}; ${fix}. Nothing was changed.`,
    );
  }
  const missing = BATON_TABLES.filter((table) => !tables.has(table));
  if (missing.length > 0) {
    throw new BatonError(
      'DB_CORRUPT',
      `--from ${path}: the Baton database is missing table(s) ${missing.join(', ')}; restore it from a backup. Nothing was changed.`,
    );
  }
}
