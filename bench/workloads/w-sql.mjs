// The floor of W as Baton stores it: the SQL that Baton's SQLite store executes for W (200 runs x
// 10 chained no-op steps, created at once), on a database with Baton's own schema, in the
// transactions the engine commits (the 200 creations group-committed, then one transaction per
// cycle that commits every finished step and claims the next), and nothing else: no engine, no
// executor, no JSON of states. What is left between this and W's rate through the API is the
// JavaScript of a step. The statements are those of src/store/sqlite (run-rows.ts, the store's
// inserts of runs, attempts and events), written out here; a change of the store's SQL belongs here
// too.
import Database from 'better-sqlite3';
import { SqliteStore } from '../../dist/store/sqlite/sqlite-store.js';
import { assert, emit, now, PAYLOAD, tempHome } from '../lib.mjs';

const RUNS = 200;
const STEPS = 10;

const home = tempHome('w-sql');
try {
  // Baton's schema, from its own migrations.
  await (await SqliteStore.open(home.dbPath)).close();
  const db = new Database(home.dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  const planJson = JSON.stringify({
    version: 1,
    name: 'bench-w',
    inputs: {},
    limits: { maxSteps: 50, noProgressAfter: 3 },
    steps: Array.from({ length: STEPS }, (_, i) => ({
      id: `s${i + 1}`,
      title: `s${i + 1}`,
      kind: 'fn',
      fn: `bench-w.s${i + 1}`,
      dependsOn: i > 0 ? [`s${i}`] : [],
      requiredOutputs: [],
      sideEffect: 'none',
      retry: { maxAttempts: 3, initialDelayMs: 1000, factor: 2, maxDelayMs: 300000, maxInterruptions: 10 },
      timeoutMs: 3600000,
      delayBeforeMs: 0,
    })),
  });
  const insertRun = db.prepare(
    `INSERT INTO runs (id, plan_name, plan_hash, inputs_json, workspace, status, created_at, updated_at, attempts_total)
     VALUES (?, 'bench-w', ?, '{}', ?, 'running', ?, ?, 0)`,
  );
  const insertPlan = db.prepare('INSERT INTO run_plans (run_id, plan_json) VALUES (?, ?)');
  const insertStep = db.prepare(
    `INSERT INTO steps (run_id, step_id, position, status, due_at, result_json, updated_at, flow_key)
     VALUES (?, ?, ?, ?, ?, NULL, ?, NULL)`,
  );
  const insertEvent = db.prepare(
    'INSERT INTO events (run_id, at, type, step_id, data_json) VALUES (?, ?, ?, ?, ?)',
  );
  const updateStep = db.prepare(
    `UPDATE steps SET status = ?, attempt = ?, tries = ?, due_at = ?, lease_owner = ?, lease_expires_at = ?,
       started_at = ?, last_error = ?, last_failure_class = ?, fingerprint = ?, fingerprint_repeats = ?,
       result_json = ?, blocked_reason = ?, updated_at = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?,
       first_started_at = ?, on_fallback = ?, interruptions = ?, waiting_for = ?, flow_key = ?,
       pid = CASE WHEN ? = 'running' THEN pid ELSE NULL END, host = CASE WHEN ? = 'running' THEN host ELSE NULL END
     WHERE run_id = ? AND step_id = ?`,
  );
  // A run that stays running keeps its status column (and its index) alone, as the store does.
  const updateRunKeepingStatus = db.prepare(
    `UPDATE runs SET attempts_total = ?, blocked_reason = ?, updated_at = ?, finished_at = ?, input_tokens = ?,
       output_tokens = ?, cost_usd = ?, version = version + 1 WHERE id = ? RETURNING version`,
  );
  const updateRun = db.prepare(
    `UPDATE runs SET status = ?, attempts_total = ?, blocked_reason = ?, updated_at = ?, finished_at = ?,
       input_tokens = ?, output_tokens = ?, cost_usd = ?, version = version + 1 WHERE id = ? RETURNING version`,
  );
  const insertAttempt = db.prepare(
    `INSERT INTO attempts (run_id, step_id, attempt, owner, started_at, ended_at, outcome, failure_class, exit_code,
       fingerprint, message, summary, log_path, outputs_json, input_tokens, output_tokens, cost_usd)
     VALUES (?, ?, ?, 'bench', ?, ?, 'succeeded', NULL, NULL, NULL, NULL, ?, NULL, '[]', 0, 0, 0)`,
  );
  const dueSteps = db.prepare(
    `SELECT s.run_id, s.step_id, s.due_at FROM steps s INDEXED BY steps_due
     WHERE s.status IN ('ready', 'retry_wait', 'waiting') AND s.due_at <= ? ORDER BY s.due_at, s.run_id, s.position LIMIT 256`,
  );
  const result = JSON.stringify({ summary: PAYLOAD, outputs: [], value: PAYLOAD });
  const succeeded = JSON.stringify({ attempt: 1, durationMs: 0, summary: PAYLOAD });
  const setStep = (run, index, status, at) =>
    updateStep.run(
      status,
      1,
      1,
      null,
      status === 'running' ? 'bench' : null,
      status === 'running' ? at + 30_000 : null,
      at,
      null,
      null,
      null,
      0,
      status === 'succeeded' ? result : null,
      null,
      at,
      0,
      0,
      0,
      at,
      0,
      0,
      null,
      null,
      status,
      status,
      run,
      `s${index + 1}`,
    );
  const ids = Array.from({ length: RUNS }, (_, r) => `run-${r}`);

  const start = now();
  let at = Date.now();
  db.transaction(() => {
    for (const id of ids) {
      insertRun.run(id, 'h'.repeat(64), home.dir, at, at);
      insertPlan.run(id, planJson);
      for (let s = 0; s < STEPS; s++)
        insertStep.run(id, `s${s + 1}`, s, s === 0 ? 'ready' : 'pending', s === 0 ? at : null, at);
      insertEvent.run(id, at, 'run.created', null, '{}');
    }
  })();
  // The first cycle claims every run's first step; each later one commits a step and claims the next.
  db.transaction(() => {
    dueSteps.all(at);
    for (const id of ids) {
      setStep(id, 0, 'running', at);
      insertEvent.run(id, at, 'step.started', 's1', '{"attempt":1}');
      updateRunKeepingStatus.get(1, null, at, null, 0, 0, 0, id);
    }
  })();
  for (let s = 0; s < STEPS; s++) {
    at++;
    db.transaction(() => {
      dueSteps.all(at);
      for (const id of ids) {
        setStep(id, s, 'succeeded', at);
        insertAttempt.run(id, `s${s + 1}`, 1, at, at, PAYLOAD);
        insertEvent.run(id, at, 'step.succeeded', `s${s + 1}`, succeeded);
        const last = s + 1 === STEPS;
        if (last) insertEvent.run(id, at, 'run.succeeded', null, '{}');
        else {
          setStep(id, s + 1, 'running', at);
          insertEvent.run(id, at, 'step.started', `s${s + 2}`, '{"attempt":1}');
        }
        if (last) updateRun.get('succeeded', s + 2, null, at, at, 0, 0, 0, id);
        else updateRunKeepingStatus.get(s + 2, null, at, null, 0, 0, 0, id);
      }
    })();
  }
  const seconds = (now() - start) / 1000;
  const done = db.prepare("SELECT count(*) FROM runs WHERE status = 'succeeded'").pluck().get();
  assert(done === RUNS, `w-sql: ${done} of ${RUNS} runs succeeded`);
  db.close();
  emit({ stepsPerSec: (RUNS * STEPS) / seconds, usPerStep: (seconds * 1e6) / (RUNS * STEPS) });
} finally {
  home.dispose();
}
