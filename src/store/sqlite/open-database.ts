import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';
import { BatonError } from '../../core/errors.js';
import type { Plan } from '../../core/plan/types.js';
import { backfillFlowKeys, type KeylessStep } from '../flow-backfill.js';
import { latestMigrationVersion, type Migration, readMigrations } from '../schema-migration-files.js';
import { recordedSchemaVersion, refuseNewerSchema, SCHEMA_APP_ID } from '../schema-version.js';
import { UNFINISHED_RUN_SQL } from '../unfinished-runs.js';
import type { OpenSqliteOptions } from './open-sqlite-options.js';
import { openSqliteFile } from './sqlite-driver.js';

export type SqliteDatabase = Database.Database;

export type { OpenSqliteOptions };

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

function loadMigrations(): Migration[] {
  return readMigrations(MIGRATIONS_DIR);
}

/** The newest schema this code knows. */
export function latestSchemaVersion(): number {
  return latestMigrationVersion(MIGRATIONS_DIR);
}

function corrupt(path: string, cause: unknown): BatonError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new BatonError(
    'DB_CORRUPT',
    `${path}: not a readable Baton database (${detail}). The file was left untouched; restore it from a backup or point --home at another folder.`,
    { cause },
  );
}

/** Creates the file 0600 before SQLite does, so state is never world-readable, even briefly. */
function createPrivateFile(path: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new BatonError(
      'CONFIG_INVALID',
      `cannot use ${dirname(path)} as the Baton folder (${code === 'EEXIST' || code === 'ENOTDIR' ? 'a file is in the way' : code}); pass --home <folder>`,
      { cause: error },
    );
  }
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
}

function schemaVersion(db: SqliteDatabase, path: string): number {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
  if (tables.length === 0) return 0;
  if (!tables.includes('baton_meta')) {
    throw new BatonError(
      'DB_CORRUPT',
      `${path}: this SQLite database was not made by Baton (tables: ${tables.slice(0, 5).join(', ')}). It was left untouched; use another --home.`,
    );
  }
  const row = db.prepare("SELECT value FROM baton_meta WHERE key = 'schema_version'").pluck().get() as
    | string
    | undefined;
  const app = db.prepare("SELECT value FROM baton_meta WHERE key = 'app'").pluck().get() as
    | string
    | undefined;
  return recordedSchemaVersion(path, app, row);
}

/** The schema version that added steps.flow_key. */
const FLOW_KEYS_VERSION = 4;

/** Gives the steps of runs not finished yet their flow key (see flow-backfill.ts). */
function backfillSqliteFlowKeys(db: SqliteDatabase): void {
  const steps = db
    .prepare(
      `SELECT s.run_id, s.step_id, s.on_fallback FROM steps s JOIN runs r ON r.id = s.run_id
       WHERE s.flow_key IS NULL AND r.status IN ${UNFINISHED_RUN_SQL}`,
    )
    .all() as KeylessStep[];
  if (steps.length === 0) return;
  const selectPlan = db.prepare('SELECT plan_json FROM run_plans WHERE run_id = ?').pluck();
  const update = db.prepare('UPDATE steps SET flow_key = ? WHERE run_id = ? AND step_id = ?');
  const planOf = (runId: string) => {
    const json = selectPlan.get(runId) as string | undefined;
    return json === undefined ? null : (JSON.parse(json) as Plan);
  };
  for (const row of backfillFlowKeys(steps, planOf)) update.run(row.flow_key, row.run_id, row.step_id);
}

/** Applies every migration newer than the database, each in its own transaction with its version row. */
function migrate(db: SqliteDatabase, path: string): void {
  const current = schemaVersion(db, path);
  // A migration builds on the tables of the version before it: a damaged database is refused, not altered.
  if (current > 0) assertSchemaComplete(db, path, current);
  const migrations = loadMigrations();
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    db.exec('BEGIN IMMEDIATE');
    try {
      // Another process may have migrated while we waited for the write lock.
      if (schemaVersion(db, path) >= migration.version) {
        db.exec('COMMIT');
        continue;
      }
      db.exec(migration.sql);
      if (migration.version === FLOW_KEYS_VERSION) backfillSqliteFlowKeys(db);
      db.prepare(
        "INSERT OR REPLACE INTO baton_meta (key, value) VALUES ('app', ?), ('schema_version', ?)",
      ).run(SCHEMA_APP_ID, String(migration.version));
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  }
}

/** The tables each schema version has (each version keeps those of the one before). */
const TABLES_ADDED_BY_VERSION: Record<number, string[]> = {
  1: ['baton_meta', 'runs', 'run_plans', 'steps', 'attempts', 'events', 'artifacts'],
  2: ['effects'],
  3: ['hook_deliveries'],
  4: ['flow_limits'],
  6: ['run_counts'],
};

function requiredTables(version: number): string[] {
  return Object.entries(TABLES_ADDED_BY_VERSION)
    .filter(([added]) => Number(added) <= version)
    .flatMap(([, tables]) => tables);
}

/** After migrating, the tables this code reads must all be there. */
function assertSchemaComplete(db: SqliteDatabase, path: string, version: number): void {
  const tables = new Set(
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[],
  );
  const missing = requiredTables(version).filter((table) => !tables.has(table));
  if (missing.length > 0) {
    throw new BatonError(
      'DB_CORRUPT',
      `${path}: the Baton database is missing table(s) ${missing.join(', ')} although its schema version says otherwise; it was left untouched (restore a backup or use another --home)`,
    );
  }
}

/**
 * Runs `change` again while SQLite answers "database is locked" without waiting. Switching a fresh
 * file to WAL takes an exclusive lock from a shared one; when several processes open a new home at
 * once, SQLite refuses one of them at once instead of calling the busy handler (it would deadlock),
 * so the busy timeout alone does not cover it.
 */
function whileLocked<T>(change: () => T, timeoutMs: number): T {
  const deadline = Date.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let delayMs = 5; ; delayMs = Math.min(delayMs * 2, 100)) {
    try {
      return change();
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      if (!code.startsWith('SQLITE_BUSY') || Date.now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, delayMs);
    }
  }
}

/** Opens (creating if needed) a Baton SQLite database: WAL, synchronous=FULL, foreign keys, migrated. */
export function openSqliteDatabase(path: string, options: OpenSqliteOptions = {}): SqliteDatabase {
  const exists = existsSync(path);
  if (exists && statSync(path).isDirectory()) {
    throw new BatonError('DB_CORRUPT', `${path}: is a directory, not a database file`);
  }
  if (!exists) createPrivateFile(path);
  let db: SqliteDatabase;
  try {
    db = openSqliteFile(path, { timeout: options.busyTimeoutMs ?? 10_000 });
  } catch (error) {
    throw corrupt(path, error);
  }
  try {
    // Identify the file before changing anything: a foreign, damaged or newer file is refused untouched.
    const version = schemaVersion(db, path);
    refuseNewerSchema(`${path}: the database`, version, latestSchemaVersion());
    createPrivateFile(path);
    // Pages freed by `baton gc` go back to the file system (sqlite-retention.ts): a mode only a
    // database without tables can take (an older home gets it from `baton gc --vacuum`).
    if (version === 0) db.pragma('auto_vacuum = INCREMENTAL');
    whileLocked(() => db.pragma('journal_mode = WAL'), options.busyTimeoutMs ?? 10_000);
    db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    db.pragma('foreign_keys = ON');
    migrate(db, path);
    assertSchemaComplete(db, path, latestSchemaVersion());
  } catch (error) {
    db.close();
    if (error instanceof BatonError) throw error;
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') throw corrupt(path, error);
    throw error;
  }
  for (const suffix of ['-wal', '-shm']) {
    const side = path + suffix;
    if (existsSync(side) && (statSync(side).mode & 0o077) !== 0) chmodSync(side, 0o600);
  }
  return db;
}

/** Wraps a failure to prepare statements on an opened database (a damaged schema) as DB_CORRUPT. */
export function schemaError(path: string, error: unknown): BatonError {
  return corrupt(path, error);
}
