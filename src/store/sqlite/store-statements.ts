import type Database from 'better-sqlite3';
import type { DueStep } from '../../core/due-order.js';
import { dueStepOfRunningRunSql, dueStepSql } from '../due-steps.js';
import { WAIT_MOVES_IN_RUN_SQL, WAIT_STEP_SQL } from '../due-waits.js';
import { leaseExpiredSql } from '../lease-rules.js';
import { ATTEMPT_USAGE_ONCE, NO_USAGE_YET } from '../store-rows.js';
import type { SqliteDatabase } from './open-database.js';

type Statement<P extends unknown[] = unknown[], R = unknown> = Database.Statement<P, R>;

interface ExpiredRow {
  run_id: string;
  step_id: string;
  attempt: number;
  pid: number | null;
  host: string | null;
}

/** A due step row as the core's DueStep (no per-row renaming in JavaScript). */
const DUE_STEP_COLUMNS =
  's.run_id AS runId, s.step_id AS stepId, s.due_at AS dueAt, s.claim_rank AS rank, s.position';

/** The write-side statements of the SQLite store (typed, so their declarations can be emitted). */
export interface StoreStatements {
  insertRun: Statement;
  insertPlan: Statement;
  insertLabel: Statement;
  insertStep: Statement;
  dueCandidates: Statement<[number, number, number, number, number, string, number, number], DueStep>;
  dueCandidatesUnsaturated: Statement<
    [number, number, number, number, number, string, number, string, number],
    DueStep
  >;
  dueCandidatesOfRun: Statement<[string, number, number, number, number, number], DueStep>;
  expired: Statement<[number, number], ExpiredRow>;
  /**
   * Runs with a wait step due, earliest first: waiting, its timeout come (its run running or
   * blocked), or ready to start waiting (found by its flow key, WAIT_FLOW_KEY).
   */
  dueWaits: Statement<[number, number], string>;
  insertAttempt: Statement;
  storedAttempt: Statement;
  insertArtifact: Statement;
  renew: Statement;
  bumpVersion: Statement;
  recordProcess: Statement;
  /** The event kept for (run, event), deleted as it is read (a wait step taking it). */
  takeKeptEvent: Statement<[string, string], { data_json: string; sent_at: number }>;
}

/** Prepares the store's statements once per connection. */
export function prepareStoreStatements(db: SqliteDatabase): StoreStatements {
  return {
    takeKeptEvent: db.prepare(
      'DELETE FROM wait_events WHERE run_id = ? AND event = ? RETURNING data_json, sent_at',
    ),
    insertRun: db.prepare(
      `INSERT INTO runs (id, plan_name, plan_hash, inputs_json, workspace, status, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertPlan: db.prepare('INSERT INTO run_plans (run_id, plan_json) VALUES (?, ?)'),
    insertLabel: db.prepare('INSERT INTO run_labels (run_id, key, value) VALUES (?, ?, ?)'),
    insertStep: db.prepare(
      'INSERT INTO steps (run_id, step_id, position, status, due_at, claim_rank, result_json, updated_at, flow_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    // Driven by the partial index of claim ranks (migration 000013), so a claim costs what is due
    // (and what of priority above 0 is due within an aging period: a rank is never later than its
    // due time), not what is stored; in the core's claim order (compareDueSteps: claim_rank,
    // due_at, run_id, plan position), paged by it so steps that cannot be claimed never hide later ones.
    dueCandidates: db.prepare<[number, number, number, number, number, string, number, number], DueStep>(
      `SELECT ${DUE_STEP_COLUMNS} FROM steps s INDEXED BY steps_claim
       WHERE ${dueStepOfRunningRunSql('?')} AND s.claim_rank <= ? AND s.claim_rank >= ?
         AND (s.claim_rank, s.due_at, s.run_id, s.position) > (?, ?, ?, ?)
       ORDER BY s.claim_rank, s.due_at, s.run_id, s.position LIMIT ?`,
    ),
    // The same, leaving out steps under flow keys at their limit (a JSON array), so that work held
    // back by flow control never fills the pages and hides claimable work behind it.
    dueCandidatesUnsaturated: db.prepare<
      [number, number, number, number, number, string, number, string, number],
      DueStep
    >(
      `SELECT ${DUE_STEP_COLUMNS} FROM steps s INDEXED BY steps_claim
       WHERE ${dueStepOfRunningRunSql('?')} AND s.claim_rank <= ? AND s.claim_rank >= ?
         AND (s.claim_rank, s.due_at, s.run_id, s.position) > (?, ?, ?, ?)
         AND (s.flow_key IS NULL OR s.flow_key NOT IN (SELECT value FROM json_each(?)))
       ORDER BY s.claim_rank, s.due_at, s.run_id, s.position LIMIT ?`,
    ),
    // One run's due steps, in the same claim order (a step's own priority may differ from its run's).
    dueCandidatesOfRun: db.prepare<[string, number, number, number, number, number], DueStep>(
      `SELECT ${DUE_STEP_COLUMNS} FROM steps s
       WHERE s.run_id = ? AND ${dueStepSql('?')} AND (s.claim_rank, s.due_at, s.position) > (?, ?, ?)
       ORDER BY s.claim_rank, s.due_at, s.position LIMIT ?`,
    ),
    expired: db.prepare<
      [number, number],
      { run_id: string; step_id: string; attempt: number; pid: number | null; host: string | null }
    >(
      `SELECT s.run_id, s.step_id, s.attempt, s.pid, s.host FROM steps s
       WHERE ${leaseExpiredSql('?')} ORDER BY s.lease_expires_at LIMIT ?`,
    ),
    // From the index of due steps: what is looked at is what is due, never every waiting step.
    dueWaits: db
      .prepare<[number, number], string>(
        `SELECT s.run_id FROM steps s INDEXED BY steps_due
         WHERE ${dueStepSql('?')} AND ${WAIT_STEP_SQL}
           AND EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND ${WAIT_MOVES_IN_RUN_SQL})
         ORDER BY s.due_at LIMIT ?`,
      )
      .pluck(),
    insertAttempt: db.prepare(
      `INSERT INTO attempts (run_id, step_id, attempt, owner, started_at, ended_at, outcome, failure_class, exit_code,
         fingerprint, message, summary, log_path, outputs_json, input_tokens, output_tokens, cost_usd)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ${ATTEMPT_USAGE_ONCE}`,
    ),
    storedAttempt: db.prepare(
      `SELECT owner, NOT (${NO_USAGE_YET}) AS hasUsage FROM attempts WHERE run_id = ? AND step_id = ? AND attempt = ?`,
    ),
    insertArtifact: db.prepare(
      'INSERT OR IGNORE INTO artifacts (run_id, step_id, attempt, path, size, sha256) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    renew: db.prepare(
      `UPDATE steps SET lease_expires_at = ? WHERE run_id = ? AND step_id = ? AND attempt = ?
         AND lease_owner = ? AND status = 'running'`,
    ),
    bumpVersion: db.prepare('UPDATE runs SET version = version + 1 WHERE id = ?'),
    recordProcess: db.prepare(
      "UPDATE steps SET pid = ?, host = ? WHERE run_id = ? AND step_id = ? AND attempt = ? AND status = 'running'",
    ),
  };
}
