// /metrics over a large store: does `baton serve --metrics` answer a scrape of a store holding
// BENCH_METRICS_RUNS (default 100,000) runs within 100 ms, on SQLite and on PostgreSQL?
//   npm run build && node bench/metrics.mjs      (BENCH_METRICS_SQLITE_ONLY=1: skip PostgreSQL)
// Per store kind, two stores: one with the history and one without (the floor of the same server
// and the same live work), both holding LIVE running runs (5 steps: one due a minute ago, four
// pending) and BLOCKED blocked runs. The history: finished runs (every 10th failed) of 5 succeeded
// steps and attempts, 2 events, and a hook call done (every 100th given up after 3 tries), built with
// bulk SQL as bench/workloads/history.mjs and bench/pg-claim-latency.mjs build theirs. The console
// (dist/console/console-server.js) serves each store in this process with metrics on; each figure
// is the median of SAMPLES requests over loopback with keep-alive, after two warm-ups, the stores
// alternating. Beside it: a static file over the same server (the HTTP floor), the bare
// `Store.metricsSnapshot` call, and that call counting the attempts of 10,000 new events and their
// usage (what a scrape 15 s after a busy minute reads).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startConsole } from '../dist/console/console-server.js';
import { PostgresStore } from '../dist/store/postgres/postgres-store.js';
import { SqliteStore } from '../dist/store/sqlite/sqlite-store.js';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { assert, median } from './lib.mjs';

const RUNS = Number(process.env.BENCH_METRICS_RUNS ?? 100_000);
const SAMPLES = Number(process.env.BENCH_METRICS_SAMPLES ?? 30);
const LIVE = 2000;
const BLOCKED = 500;
const STEPS = 5;
const NEW_EVENTS = 10_000;
const GOAL_MS = 100;
const TOKEN = 'bench-session-token-0123456789';
const HISTORY = RUNS - LIVE - BLOCKED;

/** The rows of both stores (bulk SQL per dialect): live work in both, the history in one. */
function rows(dialect, history) {
  const now = Date.now();
  const old = now - 30 * 86_400_000;
  const sqlite = dialect === 'sqlite';
  // A series of 1..n in the column `col` (g: runs, k: steps).
  const series = (n, col) =>
    sqlite
      ? `(WITH RECURSIVE s(${col}) AS (SELECT 1 UNION ALL SELECT ${col} + 1 FROM s WHERE ${col} < ${n}) SELECT ${col} FROM s)`
      : `generate_series(1, ${n}) ${col}`;
  const from = (n, steps = false) => `FROM ${series(n, 'g')}${steps ? `, ${series(STEPS, 'k')}` : ''}`;
  const id = (prefix) => (sqlite ? `printf('${prefix}%08d', g)` : `'${prefix}' || lpad(g::text, 8, '0')`);
  const json = (text) => (sqlite ? `'${text}'` : `'${text}'::json`);
  const runCols = sqlite
    ? 'id, plan_name, plan_hash, inputs_json, workspace, status, attempts_total, created_at, updated_at, finished_at'
    : 'id, plan_name, plan_hash, inputs, workspace, status, attempts_total, created_at, updated_at, finished_at, concurrency, next_due_at, running_count';
  const stepCols = `run_id, step_id, position, status, attempt, tries, due_at, started_at, updated_at${sqlite ? '' : ', fn'}`;
  const statements = [];
  const runsOf = (prefix, n, status, created, finished, nextDue, stepStatus, dueAt) => {
    const pgExtra = sqlite ? '' : `, 8, ${nextDue}, 0`;
    statements.push(
      `INSERT INTO runs (${runCols}) SELECT ${id(prefix)}, 'bench', 'h', '{}', '/w', ${status}, ${STEPS},
         ${created} + g, ${created} + g, ${finished}${pgExtra} ${from(n)}`,
      `INSERT INTO run_plans (run_id, ${sqlite ? 'plan_json' : 'plan'}) SELECT ${id(prefix)}, ${json('{}')} ${from(n)}`,
      `INSERT INTO steps (${stepCols}) SELECT ${id(prefix)}, 's' || k, k - 1, ${stepStatus}, 1, 1, ${dueAt},
         ${created}, ${created}${sqlite ? '' : ", 'noop'"} ${from(n, true)}`,
    );
  };
  // Live work, in both stores: running runs with their first step due a minute ago; blocked runs.
  runsOf(
    'l',
    LIVE,
    "'running'",
    now - 120_000,
    'NULL',
    now - 60_000,
    "CASE WHEN k = 1 THEN 'ready' ELSE 'pending' END",
    `CASE WHEN k = 1 THEN ${now - 60_000} ELSE NULL END`,
  );
  runsOf(
    'b',
    BLOCKED,
    "'blocked'",
    now - 120_000,
    'NULL',
    'NULL',
    "CASE WHEN k = 1 THEN 'blocked' ELSE 'pending' END",
    'NULL',
  );
  if (history) {
    runsOf(
      'h',
      HISTORY,
      "CASE WHEN g % 10 = 0 THEN 'failed' ELSE 'succeeded' END",
      old,
      `${old} + g`,
      'NULL',
      "'succeeded'",
      'NULL',
    );
    statements.push(
      `INSERT INTO attempts (run_id, step_id, attempt, owner, started_at, ended_at, outcome, summary)
       SELECT ${id('h')}, 's' || k, 1, 'history', ${old}, ${old}, 'succeeded', 'done' ${from(HISTORY, true)}`,
      `INSERT INTO events (run_id, at, type, step_id, ${sqlite ? 'data_json' : 'data'})
       SELECT ${id('h')}, ${old}, t, NULL, ${json('{}')} ${from(HISTORY)},
         ${sqlite ? "(SELECT 'run.created' AS t UNION ALL SELECT 'run.succeeded')" : "unnest(ARRAY['run.created', 'run.succeeded']) t"}`,
      `INSERT INTO hook_deliveries (run_id, event_seq, hook, state, attempts, due_at)
       SELECT ${id('h')}, g, 0, CASE WHEN g % 100 = 0 THEN 'failed' ELSE 'done' END,
         CASE WHEN g % 100 = 0 THEN 3 ELSE 1 END, ${old} ${from(HISTORY)}`,
    );
  }
  return statements;
}

/**
 * 10,000 attempt-ending events after everything else (for the counted-range figure), each ending an
 * attempt whose row reports usage (read through the attempts' key for tokens and cost by model).
 */
function newEvents(dialect) {
  const sqlite = dialect === 'sqlite';
  const series = sqlite
    ? `(WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < ${NEW_EVENTS}) SELECT g FROM s)`
    : `generate_series(1, ${NEW_EVENTS}) g`;
  const data = sqlite
    ? `json_object('stepId', 's1', 'attempt', g, 'failureClass', 'transient', 'message', 'HTTP 503')`
    : `json_build_object('stepId', 's1', 'attempt', g, 'failureClass', 'transient', 'message', 'HTTP 503')`;
  const now = Date.now();
  return `INSERT INTO attempts (run_id, step_id, attempt, owner, started_at, ended_at, outcome, input_tokens, output_tokens, cost_usd)
    SELECT 'l00000001', 's1', g, 'bench', ${now}, ${now}, 'failed', 1000, 200, 0.4 FROM ${series};
    INSERT INTO events (run_id, at, type, step_id, ${sqlite ? 'data_json' : 'data'})
    SELECT 'l00000001', ${now}, CASE WHEN g % 2 = 0 THEN 'step.failed' ELSE 'step.succeeded' END, 's1',
      ${data} FROM ${series}`;
}

async function measure(kind, stores, exec) {
  const consoles = {};
  for (const [name, store] of Object.entries(stores))
    consoles[name] = await startConsole({
      store,
      home: tmpdir(),
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      pollMs: 60_000,
      metrics: { scrapeToken: null },
    });
  const get = async (origin, path) => {
    const started = performance.now();
    const response = await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const body = await response.text();
    assert(response.status === 200, `${path}: ${response.status} ${body}`);
    return { ms: performance.now() - started, body };
  };
  const samples = { metricsHistory: [], metricsEmpty: [], staticHistory: [], snapshot: [] };
  try {
    for (let i = 0; i < 2; i++) for (const c of Object.values(consoles)) await get(c.origin, '/metrics');
    for (let i = 0; i < SAMPLES; i++) {
      samples.metricsHistory.push((await get(consoles.history.origin, '/metrics')).ms);
      samples.metricsEmpty.push((await get(consoles.empty.origin, '/metrics')).ms);
      samples.staticHistory.push((await get(consoles.history.origin, '/assets/console.css')).ms);
      const started = performance.now();
      await stores.history.metricsSnapshot({ now: Date.now(), events: { afterSeq: 0, upToSeq: 0 } });
      samples.snapshot.push(performance.now() - started);
    }
    const text = (await get(consoles.history.origin, '/metrics')).body;
    const runs = [...text.matchAll(/^baton_runs\{status="\w+"\} (\d+)$/gm)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
    assert(runs === RUNS, `the history store's /metrics counts ${runs} runs`);
    assert(/^baton_steps_due 2000$/m.test(text), 'due steps');
    // The counted range: 10,000 attempt-ending events since the last scrape.
    const before = await stores.history.lastEventSeq();
    await exec(newEvents(kind));
    const after = await stores.history.lastEventSeq();
    const range = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const counted = await stores.history.metricsSnapshot({
        now: Date.now(),
        events: { afterSeq: before, upToSeq: after },
      });
      range.push(performance.now() - started);
      assert(counted.attemptsEnded.reduce((n, a) => n + a.count, 0) === NEW_EVENTS, 'counted events');
      assert(counted.usageEnded.reduce((n, u) => n + u.attempts, 0) === NEW_EVENTS, 'counted usage');
    }
    const result = Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, median(values)]));
    result.snapshotCounting10kEvents = median(range);
    return result;
  } finally {
    for (const c of Object.values(consoles)) await c.close();
  }
}

function report(kind, figures) {
  const f = (ms) => `${ms.toFixed(2)} ms`;
  console.log(
    `\n${kind}: ${RUNS.toLocaleString('en')} runs (${LIVE} running, ${BLOCKED} blocked, the rest finished)`,
  );
  console.log(
    `  GET /metrics, ${RUNS.toLocaleString('en')} runs      ${f(figures.metricsHistory)}  (goal <= ${GOAL_MS} ms: ${figures.metricsHistory <= GOAL_MS ? 'met' : 'NOT met'})`,
  );
  console.log(
    `  GET /metrics, live runs only       ${f(figures.metricsEmpty)}  (floor: the same live work without history)`,
  );
  console.log(
    `  GET /assets/console.css            ${f(figures.staticHistory)}  (floor: HTTP on the same server)`,
  );
  console.log(`  Store.metricsSnapshot (bare)       ${f(figures.snapshot)}`);
  console.log(`  ... counting 10,000 new events     ${f(figures.snapshotCounting10kEvents)}`);
}

// BENCH_METRICS_KEEP=1 keeps the SQLite files (for EXPLAIN QUERY PLAN) and prints where.
const keep = process.env.BENCH_METRICS_KEEP === '1';
const dir = mkdtempSync(join(tmpdir(), 'baton-bench-metrics-'));
try {
  // SQLite: two files migrated by the store, filled with bulk SQL on a second connection.
  const stores = {};
  for (const name of ['empty', 'history']) {
    const path = join(dir, `${name}.db`);
    (await SqliteStore.open(path)).close();
    const db = new Database(path);
    const started = performance.now();
    db.exec(`BEGIN; ${rows('sqlite', name === 'history').join(';\n')}; COMMIT; ANALYZE`);
    if (name === 'history')
      console.log(`sqlite history built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    db.close();
    stores[name] = await SqliteStore.open(path);
  }
  const sqliteFigures = await measure('sqlite', stores, async (sql) => {
    const db = new Database(join(dir, 'history.db'));
    db.exec(sql);
    db.close();
  });
  for (const store of Object.values(stores)) await store.close();
  report('SQLite', sqliteFigures);

  if (process.env.BENCH_METRICS_SQLITE_ONLY !== '1') {
    const cluster = await startCluster();
    const admin = new pg.Pool({ connectionString: cluster.url, max: 2 });
    try {
      const pgStores = {};
      for (const name of ['empty', 'history']) {
        const schema = `metrics_${name}`;
        (await PostgresStore.open(cluster.url, { schema })).close();
        const client = await admin.connect();
        const started = performance.now();
        try {
          await client.query(`SET search_path TO "${schema}"`);
          await client.query('BEGIN; SET LOCAL session_replication_role = replica');
          for (const sql of rows('postgres', name === 'history')) await client.query(sql);
          await client.query('COMMIT');
          await client.query('VACUUM ANALYZE');
        } finally {
          client.release();
        }
        if (name === 'history')
          console.log(`postgres history built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
        pgStores[name] = await PostgresStore.open(cluster.url, { schema });
      }
      const pgFigures = await measure('postgres', pgStores, async (sql) => {
        await admin.query(`SET search_path TO metrics_history; ${sql}`);
      });
      for (const store of Object.values(pgStores)) await store.close();
      report('PostgreSQL', pgFigures);
    } finally {
      await admin.end();
      await cluster.stop();
    }
  }
} finally {
  if (keep) console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
