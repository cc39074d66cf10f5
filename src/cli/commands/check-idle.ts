import { existsSync, statSync, writeSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { Plan, PlanStep } from '../../core/plan/types.js';
import { redactValue } from '../../core/redact.js';
import { planSecretEnv } from '../../core/run-secrets.js';
import type { EngineReport } from '../../engine/engine.js';
import { RunSecretsCache } from '../../engine/run-secrets-cache.js';
import { NEEDS_A_PERSON_LIMIT } from '../../runtime/due-work.js';
import { databasePath, resolveHome } from '../../runtime/home.js';
import { engineSettings } from '../../runtime/settings.js';
import { SCHEMA_APP_ID, SQLITE_SCHEMA_VERSION } from '../../store/schema-tables.js';
import { ANYTHING_TO_DO_SQL, IDLE_SCHEMA_OBJECTS, IDLE_SCHEMA_SQL } from '../../store/sqlite/idle-read.js';
import { openSqliteFile } from '../../store/sqlite/sqlite-driver.js';
import type { WaitingStep } from '../../store/store.js';
import {
  SQLITE_WAITING_COUNT_SQL,
  SQLITE_WAITING_STEPS_SQL,
  type WaitingStepRow,
  waitingStepFromRow,
} from '../../store/waiting-steps.js';
import { EXIT } from '../exit-codes.js';
import type { GlobalOptions } from '../global-options.js';
import { guardStdout } from '../stdout-guard.js';
import { WAITING_SHOWN, waitingLines } from './check-waiting.js';

/** Whether the database file or its WAL sidecars are readable by others (the full open makes them 0600). */
function notPrivate(path: string): boolean {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      if ((statSync(file).mode & 0o077) !== 0) return true;
    } catch {
      // A sidecar that does not exist is fine.
    }
  }
  return false;
}

/** The steps that wait, as the full check reports them: masked with each run's secrets as its reads are. */
interface IdleWaiting {
  shown: { waiting: WaitingStep; step: PlanStep | undefined }[];
  total: number;
}

/** Up to `limit` waiting steps (longest waiting first) with their plan steps, masked (see maskedReads). */
function readWaiting(db: Database.Database, limit: number, secretValues: readonly string[]): IdleWaiting {
  const rows = db.prepare(SQLITE_WAITING_STEPS_SQL).all(limit) as WaitingStepRow[];
  if (rows.length === 0) return { shown: [], total: 0 };
  const total = (db.prepare(SQLITE_WAITING_COUNT_SQL).get() as { n: number }).n;
  const planOf = db.prepare('SELECT plan_json FROM run_plans WHERE run_id = ?').pluck();
  const plans = new Map<string, Plan>();
  const secrets = new RunSecretsCache(process.env, secretValues);
  const shown = rows.map((row) => {
    let plan = plans.get(row.run_id);
    if (!plan) {
      plan = JSON.parse(planOf.get(row.run_id) as string) as Plan;
      plans.set(row.run_id, plan);
    }
    const masked = secrets.secretsFor(planSecretEnv(plan));
    return redactValue(
      { waiting: waitingStepFromRow(row), step: plan.steps.find((step) => step.id === row.step_id) },
      masked,
    );
  });
  return { shown, total };
}

/** Straight to fd 1: process.stdout would first build its stream (about 6 ms on a pipe). */
function writeOut(text: string): void {
  const bytes = Buffer.from(text);
  let offset = 0;
  try {
    while (offset < bytes.length) offset += writeSync(1, bytes, offset);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A reader that went away (`| head`) is not a failure; a full non-blocking pipe gets the rest later.
    if (code === 'EPIPE') return;
    if (code !== 'EAGAIN') throw error;
    guardStdout();
    process.stdout.write(bytes.subarray(offset));
  }
}

/**
 * The heartbeat's usual answer, fast: `baton check` on the embedded store with nothing to do.
 * Read with better-sqlite3 and what the store says of it (store/sqlite/idle-read.ts: its rules of
 * what is due, its tables and indexes), without loading the engine, the store or a migration, so
 * a check every few minutes costs little more than starting Node. Anything else returns null and the full check
 * runs: something to do, no database yet, another schema version or a damaged one, files readable
 * by others (the full open makes them 0600 again), any error (the full check reports it properly).
 */
export function idleCheck(options: GlobalOptions & { quiet?: boolean }): number | null {
  // Bad flags or BATON_* settings are refused as the full check would refuse them.
  const settings = engineSettings({});
  if (process.env.BATON_DATABASE_URL) return null;
  const path = databasePath(resolveHome(options));
  if (!existsSync(path) || notPrivate(path)) return null;
  let db: Database.Database | undefined;
  let waiting: IdleWaiting | undefined;
  try {
    db = openSqliteFile(path, { fileMustExist: true, timeout: 10_000 });
    const schema = db.prepare(IDLE_SCHEMA_SQL).get() as { app: unknown; version: unknown; present: number };
    if (schema.app !== SCHEMA_APP_ID || schema.version !== String(SQLITE_SCHEMA_VERSION)) return null;
    if (schema.present !== IDLE_SCHEMA_OBJECTS) return null;
    // One snapshot: nothing due, and the steps that wait meanwhile.
    db.exec('BEGIN');
    if (db.prepare(ANYTHING_TO_DO_SQL).pluck().get({ now: Date.now() }) !== 0) return null;
    if (!options.quiet)
      waiting = readWaiting(db, options.json ? NEEDS_A_PERSON_LIMIT : WAITING_SHOWN, settings.secrets ?? []);
  } catch {
    return null;
  } finally {
    if (db?.inTransaction) db.exec('COMMIT');
    db?.close();
  }
  return answerNothingDue(options, waiting);
}

/**
 * What `baton check` prints when it did nothing and nothing is blocked (here, and for a home that
 * has no store yet): `nothing due` and the steps that wait, the empty report with `--json` (with
 * the waiting steps), nothing with `--quiet`.
 */
export function answerNothingDue(
  options: { json?: boolean; quiet?: boolean },
  waiting: IdleWaiting = { shown: [], total: 0 },
): number {
  if (options.json) {
    const report = {
      attemptsStarted: 0,
      attemptsCommitted: 0,
      attemptsDiscarded: 0,
      reclaimed: 0,
      scheduleRunsStarted: 0,
      scheduleSlotsLeft: false,
      blocked: [],
      waiting: waiting.shown.map((entry) => entry.waiting),
    } satisfies EngineReport & { blocked: []; waiting: WaitingStep[] };
    writeOut(`${JSON.stringify(report, null, 2)}\n`);
  } else if (!options.quiet) writeOut(`nothing due\n${waitingLines(waiting.shown, waiting.total)}`);
  return EXIT.ok;
}
