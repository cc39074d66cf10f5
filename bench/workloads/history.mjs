// History (SQLite): does a store holding BENCH_HISTORY_RUNS (default 100,000) finished runs list and
// claim as fast as an empty one, and does `baton gc` remove them in bounded memory?
// Two homes, one empty and one with the history (5 succeeded steps, 5 attempts and 2 events per
// run, built with bulk SQL in one transaction). Each figure is the median over SAMPLES calls, the
// two homes alternating so noise hits both alike; the empty home is each figure's floor.
// - lists: Store.listRuns (all, and status=running: how a caller polls "still running?"), the
//   console's listRunPage, and the `baton status` command (process start to exit);
// - claims: a cycle that commits the last claim and claims the next due step (one fsynced
//   transaction, also compared with the floor benchmark's), and nextWakeAt (an idle worker's poll);
// - gc: `baton gc --older-than 1d` on the history home (process start to exit, its peak RSS, the
//   file before and after), beside the bare SQL delete of the same rows on a copy of the file.
import { spawnSync } from 'node:child_process';
import { copyFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { startRun } from '../../dist/engine/start-run.js';
import { assert, chainPlan, claimer, emit, median, now, openStore, tempHome, timed } from '../lib.mjs';

const HISTORY = Number(process.env.BENCH_HISTORY_RUNS ?? 100_000);
const SAMPLES = Number(process.env.BENCH_HISTORY_SAMPLES ?? 30);
const STATUS_INVOCATIONS = Number(process.env.BENCH_HISTORY_INVOCATIONS ?? 7);
const STEPS = 5;
/** Runs still going in both homes: a full page of every list, and one to claim per sample. */
const LIVE_RUNS = Math.max(60, SAMPLES + 1);
const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', '..', 'dist', 'cli', 'baton.cjs');
const MAX_RSS = join(here, '..', 'max-rss.cjs');

/** The history: finished long ago (gc's --older-than 1d takes it all), before any live run. */
function insertHistory(db, count) {
  const at = Date.now() - 30 * 86_400_000;
  const g = `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${count})`;
  const k = `k(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM k WHERE j < ${STEPS})`;
  const id = "printf('h%08d', n)";
  const started = now();
  db.exec(`BEGIN;
    ${g} INSERT INTO runs (id, plan_name, plan_hash, inputs_json, workspace, status, attempts_total, created_at,
        updated_at, finished_at)
      SELECT ${id}, 'history', 'h', '{}', '/w', CASE WHEN n % 10 = 0 THEN 'failed' ELSE 'succeeded' END, ${STEPS},
        ${at} + n, ${at} + n, ${at} + n FROM g;
    ${g} INSERT INTO run_plans (run_id, plan_json) SELECT ${id}, '{}' FROM g;
    ${g}, ${k} INSERT INTO steps (run_id, step_id, position, status, attempt, tries, started_at, updated_at, result_json)
      SELECT ${id}, 's' || j, j - 1, 'succeeded', 1, 1, ${at}, ${at}, '{"summary":"done","outputs":[]}' FROM g, k;
    ${g}, ${k} INSERT INTO attempts (run_id, step_id, attempt, owner, started_at, ended_at, outcome, summary)
      SELECT ${id}, 's' || j, 1, 'history', ${at}, ${at}, 'succeeded', 'done' FROM g, k;
    ${g} INSERT INTO events (run_id, at, type, step_id, data_json)
      SELECT ${id}, ${at}, t, NULL, '{}' FROM g, (SELECT 'run.created' AS t UNION ALL SELECT 'run.succeeded');
    COMMIT;`);
  return now() - started;
}

function baton(home, args, preload = []) {
  const started = now();
  const result = spawnSync(process.execPath, [...preload, CLI, '--home', home, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  const ms = now() - started;
  assert(result.status === 0, `baton ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return { ms, result };
}

const homes = { empty: tempHome('history-empty'), history: tempHome('history-full') };
try {
  const stores = {};
  for (const [name, home] of Object.entries(homes)) stores[name] = openStore(home.dbPath);
  const buildMs = insertHistory(stores.history.db, HISTORY);

  // Live runs after the history, the same in both homes: more than a page of the list (so both
  // list the same number of runs) and more than the claims take.
  const plan = chainPlan('claim', 1);
  for (const store of Object.values(stores)) {
    for (let i = 0; i < LIVE_RUNS; i++) await startRun(store, { plan, runId: `c${i}`, workspace: '/tmp' });
  }

  const calls = {
    listMs: (s) => s.listRuns(),
    listRunningMs: (s) => s.listRuns({ status: 'running' }),
    pageMs: (s) => s.listRunPage(),
    wakeMs: (s) => s.nextWakeAt(),
  };
  const keys = [...Object.keys(calls), 'claimMs', 'statusMs'];
  const samples = Object.fromEntries(
    Object.keys(stores).map((name) => [name, Object.fromEntries(keys.map((key) => [key, []]))]),
  );
  const claim = { empty: claimer(stores.empty), history: claimer(stores.history) };
  for (const name of Object.keys(stores)) for (const call of Object.values(calls)) await call(stores[name]);
  for (let i = 0; i < SAMPLES; i++) {
    for (const name of Object.keys(stores)) {
      for (const [key, call] of Object.entries(calls)) {
        samples[name][key].push(await timed(() => call(stores[name])));
      }
      samples[name].claimMs.push(await claim[name]());
    }
  }
  const listed = await stores.history.listRunPage();
  assert(listed.total === HISTORY + LIVE_RUNS, `history home lists ${listed.total} runs`);
  for (const store of Object.values(stores)) await store.close();

  for (let i = 0; i < STATUS_INVOCATIONS; i++) {
    for (const name of Object.keys(homes)) {
      samples[name].statusMs.push(baton(homes[name].dir, ['status']).ms);
    }
  }

  const result = { historyRuns: HISTORY, buildMs };
  for (const key of Object.keys(samples.empty)) {
    result[`${key}Empty`] = median(samples.empty[key]);
    result[`${key}History`] = median(samples.history[key]);
    result[`${key}Ratio`] = result[`${key}History`] / result[`${key}Empty`];
  }

  // gc: the floor is the bare delete of the same runs (cascading) on a copy, in one transaction.
  const copy = join(homes.empty.dir, 'copy.db');
  copyFileSync(homes.history.dbPath, copy);
  const bare = new Database(copy);
  bare.pragma('foreign_keys = ON');
  const floorStarted = now();
  bare.exec(
    `BEGIN; DELETE FROM runs WHERE status IN ('succeeded', 'failed', 'cancelled') AND finished_at < ${
      Date.now() - 86_400_000
    }; PRAGMA incremental_vacuum; COMMIT;`,
  );
  result.gcFloorMs = now() - floorStarted;
  bare.close();
  result.dbMbBefore = statSync(homes.history.dbPath).size / 2 ** 20;
  const gc = baton(homes.history.dir, ['gc', '--older-than', '1d', '--json'], ['-r', MAX_RSS]);
  const removed = JSON.parse(gc.result.stdout).runs.length;
  assert(removed === HISTORY, `gc removed ${removed} runs, expected ${HISTORY}`);
  result.gcMs = gc.ms;
  result.gcRatio = gc.ms / result.gcFloorMs;
  result.gcPeakRssMb = Number(/BENCH_MAX_RSS_KB (\d+)/.exec(gc.result.stderr)[1]) / 1024;
  result.dbMbAfter = statSync(homes.history.dbPath).size / 2 ** 20;
  const node = spawnSync(process.execPath, ['-r', MAX_RSS, '-e', '0'], { encoding: 'utf8' });
  result.nodeRssMb = Number(/BENCH_MAX_RSS_KB (\d+)/.exec(node.stderr)[1]) / 1024;
  emit(result);
} finally {
  for (const home of Object.values(homes)) home.dispose();
}
