import { existsSync, statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { Plan, PlanStep } from '../core/plan/types.js';
import { redactValue } from '../core/redact.js';
import { planSecretEnv } from '../core/run-secrets.js';
import { asksToolApprovals } from '../core/tool-approval.js';
import { RunSecretsCache } from '../engine/run-secrets-cache.js';
import { LEASED_STEP_SQL } from '../store/lease-rules.js';
import { SCHEMA_APP_ID, SQLITE_SCHEMA_VERSION } from '../store/schema-tables.js';
import { ANYTHING_TO_DO_SQL, IDLE_SCHEMA_OBJECTS, IDLE_SCHEMA_SQL } from '../store/sqlite/idle-read.js';
import { openSqliteFile } from '../store/sqlite/sqlite-driver.js';
import type { WaitingStep } from '../store/store.js';
import {
  SQLITE_WAITING_COUNT_SQL,
  SQLITE_WAITING_STEPS_SQL,
  type WaitingStepRow,
  waitingStepFromRow,
} from '../store/waiting-steps.js';

// The idle `baton check`'s read (cli/commands/check-idle.ts answers with it): light imports only,
// it is bundled into the launcher and must cost little more than starting Node.

/** The steps that wait, as the full check reports them: masked with each run's secrets as its reads are. */
export interface IdleWaiting {
  shown: { waiting: WaitingStep; step: PlanStep | undefined }[];
  total: number;
}

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

/**
 * Whether a running step's agent may hold a tool call for a person (`agent.approve`): the full
 * check lists those calls (from the run's events), so the idle answer is not given.
 */
function mayHoldToolCalls(db: Database.Database): boolean {
  const running = db
    .prepare(`SELECT s.run_id, s.step_id FROM steps s INDEXED BY steps_leased WHERE ${LEASED_STEP_SQL}`)
    .all() as { run_id: string; step_id: string }[];
  if (running.length === 0) return false;
  const planOf = db.prepare('SELECT plan_json FROM run_plans WHERE run_id = ?').pluck();
  const plans = new Map<string, Plan>();
  return running.some((row) => {
    let plan = plans.get(row.run_id);
    if (!plan) {
      plan = JSON.parse(planOf.get(row.run_id) as string) as Plan;
      plans.set(row.run_id, plan);
    }
    return asksToolApprovals(plan.steps.find((step) => step.id === row.step_id));
  });
}

/** Up to `limit` waiting steps (longest waiting first) with their plan steps, masked (see maskedReads). */
function readWaiting(
  db: Database.Database,
  limit: number,
  env: NodeJS.ProcessEnv,
  secretValues: readonly string[],
): IdleWaiting {
  const rows = db.prepare(SQLITE_WAITING_STEPS_SQL).all(limit) as WaitingStepRow[];
  if (rows.length === 0) return { shown: [], total: 0 };
  const total = (db.prepare(SQLITE_WAITING_COUNT_SQL).get() as { n: number }).n;
  const planOf = db.prepare('SELECT plan_json FROM run_plans WHERE run_id = ?').pluck();
  const plans = new Map<string, Plan>();
  const secrets = new RunSecretsCache(env, secretValues);
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

export interface IdleReadOptions {
  /** How many waiting steps to read (0: none, only whether anything is due). */
  waitingLimit: number;
  env: NodeJS.ProcessEnv;
  /** BATON_SECRET_ENV's values, masked as the full check masks them. */
  secretValues: readonly string[];
  now: number;
}

/**
 * Whether the embedded store at `path` has nothing due, read with better-sqlite3 and what the store
 * says of it (store/sqlite/idle-read.ts: its rules of what is due, its tables and indexes) without
 * loading the engine, the store or a migration. The steps that wait when nothing is due; null when
 * the full check must run: something to do, no database yet, another schema version or a damaged
 * one, files readable by others (the full open makes them 0600 again), any error (the full check
 * reports it properly).
 */
export function readIdle(path: string, options: IdleReadOptions): IdleWaiting | null {
  if (!existsSync(path) || notPrivate(path)) return null;
  let db: Database.Database | undefined;
  try {
    db = openSqliteFile(path, { fileMustExist: true, timeout: 10_000 });
    const schema = db.prepare(IDLE_SCHEMA_SQL).get() as { app: unknown; version: unknown; present: number };
    if (schema.app !== SCHEMA_APP_ID || schema.version !== String(SQLITE_SCHEMA_VERSION)) return null;
    if (schema.present !== IDLE_SCHEMA_OBJECTS) return null;
    // One snapshot: nothing due, and the steps that wait meanwhile.
    db.exec('BEGIN');
    if (db.prepare(ANYTHING_TO_DO_SQL).pluck().get({ now: options.now }) !== 0) return null;
    if (options.waitingLimit === 0) return { shown: [], total: 0 };
    if (mayHoldToolCalls(db)) return null;
    return readWaiting(db, options.waitingLimit, options.env, options.secretValues);
  } catch {
    return null;
  } finally {
    if (db?.inTransaction) db.exec('COMMIT');
    db?.close();
  }
}
