// Crash and restart: 200 runs x 10 no-op steps; a worker process is SIGKILLed after ~40% of the
// steps ran, a second worker finishes the rest. Counts steps executed twice (lines in the
// counting file beyond 2000) against the steps in flight at the kill.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { assert, chainPlan, createRuns, emit, now, openStore, sleep, tempHome } from '../lib.mjs';

const RUNS = 200;
const STEPS = 10;
const TOTAL = RUNS * STEPS;
const KILL_AT = Math.round(TOTAL * 0.4);
const LEASE_MS = 1000;
const WORKER = join(dirname(fileURLToPath(import.meta.url)), '..', 'crash-worker.mjs');

const home = tempHome('crash');
const countFile = join(home.dir, 'executions.log');
const lines = () => (existsSync(countFile) ? readFileSync(countFile, 'utf8').split('\n').length - 1 : 0);

function startWorker() {
  const child = spawn(
    process.execPath,
    [WORKER, '--home', home.dir, '--count', countFile, '--lease', String(LEASE_MS), '--concurrency', '64'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, exited };
}

/** Polls (read-only connection) until `done(counts)` or the deadline. */
async function waitFor(reader, done, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counts = reader();
    if (done(counts)) return counts;
    if (Date.now() > deadline)
      throw new Error(`crash-restart: timed out waiting for ${what} (${JSON.stringify(counts)})`);
    await sleep(2);
  }
}

let workers = [];
try {
  const store = openStore(home.dbPath);
  await createRuns(store, chainPlan('bench-crash', STEPS), RUNS, home.dir);
  await store.close();

  const db = new Database(home.dbPath, { readonly: true });
  const committedStmt = db.prepare("SELECT count(*) FROM attempts WHERE outcome = 'succeeded'").pluck();
  const runningStmt = db.prepare("SELECT count(*) FROM steps WHERE status = 'running'").pluck();
  const succeededRunsStmt = db.prepare("SELECT count(*) FROM runs WHERE status = 'succeeded'").pluck();
  const unfinishedRunsStmt = db.prepare("SELECT count(*) FROM runs WHERE status <> 'succeeded'").pluck();
  const committed = () => committedStmt.get();

  // First worker: SIGKILL once ~40% of the steps have run (lines in the counting file), which
  // lands between an execution and its commit, the interesting moment for a crash.
  const first = startWorker();
  workers.push(first);
  const firstStart = now();
  await waitFor(lines, (n) => n >= KILL_AT, `${KILL_AT} executed steps`);
  first.child.kill('SIGKILL');
  const firstExit = await first.exited;
  const firstSeconds = (now() - firstStart) / 1000;
  assert(
    firstExit.signal === 'SIGKILL',
    `first worker ended ${JSON.stringify(firstExit)} instead of by SIGKILL`,
  );

  const committedAtKill = committed();
  const inFlightAtKill = runningStmt.get();
  const executedAtKill = lines();
  const executedUncommittedAtKill = executedAtKill - committedAtKill;

  // Second worker: waits out the dead worker's leases, retries those attempts, finishes the rest.
  const second = startWorker();
  workers.push(second);
  const secondStart = now();
  let firstCommitMs = null;
  await waitFor(
    () => {
      const c = committed();
      if (firstCommitMs === null && c > committedAtKill) firstCommitMs = now() - secondStart;
      return { c, unfinished: unfinishedRunsStmt.get() };
    },
    ({ unfinished }) => unfinished === 0,
    'all runs to succeed',
  );
  const secondSeconds = (now() - secondStart) / 1000;
  second.child.kill('SIGTERM');
  const secondExit = await second.exited;
  workers = [];
  assert(secondExit.code === 0, `second worker exited ${JSON.stringify(secondExit)}`);

  const succeededRuns = succeededRunsStmt.get();
  const committedTotal = committed();
  const interrupted = db.prepare("SELECT count(*) FROM attempts WHERE outcome = 'interrupted'").pluck().get();
  db.close();
  const executions = lines();
  const reExecuted = executions - TOTAL;
  assert(succeededRuns === RUNS, `${succeededRuns}/${RUNS} runs succeeded`);
  assert(committedTotal === TOTAL, `${committedTotal} succeeded attempts, expected ${TOTAL}`);
  assert(reExecuted >= 0, `only ${executions} executions for ${TOTAL} steps`);
  assert(
    reExecuted <= inFlightAtKill,
    `${reExecuted} steps re-executed but only ${inFlightAtKill} were in flight at the kill`,
  );
  const remaining = TOTAL - committedAtKill;
  emit({
    committedAtKill,
    inFlightAtKill,
    executedUncommittedAtKill,
    reExecuted,
    interruptedAttempts: interrupted,
    firstWorkerSeconds: firstSeconds,
    firstWorkerStepsPerSec: committedAtKill / firstSeconds,
    secondWorkerSeconds: secondSeconds,
    secondWorkerFirstCommitMs: firstCommitMs,
    remainingSteps: remaining,
    secondWorkerStepsPerSec: remaining / secondSeconds,
  });
} finally {
  for (const w of workers) w.child.kill('SIGKILL');
  home.dispose();
}
