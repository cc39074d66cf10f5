import { cpus, loadavg } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startRun } from '../dist/engine/start-run.js';
import { PostgresStore } from '../dist/store/postgres/postgres-store.js';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { chainPlan, median, PAYLOAD } from './lib.mjs';
import { measureClaimLatency } from './pg-claim-latency.mjs';
import { startPgWorker } from './pg-worker-process.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_PG_ROUNDS ?? 3);
const WORKER_COUNTS = (process.env.BENCH_PG_WORKERS ?? '1,2,4').split(',').map(Number);
const CONCURRENCY = Number(process.env.BENCH_PG_CONCURRENCY ?? 64);
const HISTORY = Number(process.env.BENCH_PG_HISTORY ?? 100_000);
const FLOW = process.env.BENCH_PG_FLOW ? Number(process.env.BENCH_PG_FLOW) : null;
const RUNS = 200;
const STEPS = 10;
const FLOOR_TXNS = 2000;
const GOAL = 1500;

/** 2000 autocommit upserts of ~100 bytes on one connection: the cost of one durable commit. */
async function measureFloor(admin, round) {
  const table = `floor_${round}`;
  await admin.query(
    `DROP TABLE IF EXISTS ${table}; CREATE TABLE ${table} (run text, step text, payload text, PRIMARY KEY (run, step))`,
  );
  const client = await admin.connect();
  try {
    const sql = `INSERT INTO ${table} (run, step, payload) VALUES ($1, $2, $3)
      ON CONFLICT (run, step) DO UPDATE SET payload = excluded.payload`;
    const start = performance.now();
    for (let i = 0; i < FLOOR_TXNS; i++) {
      await client.query(sql, [`r${Math.floor(i / STEPS)}`, `s${i % STEPS}`, PAYLOAD]);
    }
    const seconds = (performance.now() - start) / 1000;
    return { txPerSec: FLOOR_TXNS / seconds, msPerTx: (seconds * 1000) / FLOOR_TXNS };
  } finally {
    client.release();
    await admin.query(`DROP TABLE ${table}`);
  }
}

function startWorker(url, schema) {
  return startPgWorker([url, schema, CONCURRENCY]);
}

/** 200 x 10 no-op steps drained by `workers` processes; steps/s from "go" to the last run's end. */
async function measureThroughput(url, admin, workers, round) {
  const schema = `tp_${workers}_${round}`;
  const store = await PostgresStore.open(url, { schema });
  const plan = chainPlan('bench-pg', STEPS);
  try {
    if (FLOW !== null)
      await store.setFlowLimit({ key: 'fn:noop', concurrency: FLOW, rate: null }, Date.now());
    for (let i = 0; i < RUNS; i++) await startRun(store, { plan, runId: `r${i}`, workspace: here });
  } finally {
    await store.close();
  }
  const procs = Array.from({ length: workers }, () => startWorker(url, schema));
  await Promise.all(procs.map((p) => p.ready));
  const q = (sql) => admin.query(sql.replaceAll('S.', `"${schema}".`)).then((r) => r.rows);
  const start = Date.now();
  for (const p of procs) p.child.stdin.write('go\n');
  for (;;) {
    const [{ n }] = await q(`SELECT count(*)::int AS n FROM S.runs WHERE status = 'succeeded'`);
    if (n === RUNS) break;
    const [{ bad }] = await q(
      `SELECT count(*)::int AS bad FROM S.runs WHERE status NOT IN ('running', 'succeeded')`,
    );
    if (bad > 0) throw new Error(`${bad} runs ended badly`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const [{ end }] = await q('SELECT max(finished_at) AS "end" FROM S.runs');
  const seconds = (Number(end) - start) / 1000;
  for (const p of procs) p.child.kill('SIGTERM');
  const reports = await Promise.all(procs.map((p) => p.report()));
  const [{ attempts, started }] = await q(
    `SELECT (SELECT count(*)::int FROM S.attempts WHERE outcome = 'succeeded') AS attempts,
            (SELECT count(*)::int FROM S.events WHERE type = 'step.started') AS started`,
  );
  const total = RUNS * STEPS;
  if (attempts !== total || started !== total)
    throw new Error(`expected ${total} attempts and starts, found ${attempts} and ${started}`);
  await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
  return {
    stepsPerSec: total / seconds,
    msPerStep: (seconds * 1000) / total,
    perWorker: reports.map((r) => r.attemptsCommitted),
  };
}

const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

const cluster = await startCluster();
// Interrupted: do not leave the cluster running.
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => cluster.stop().finally(() => process.exit(130)));
const admin = new pg.Pool({ connectionString: cluster.url, max: 2 });
admin.on('error', () => undefined);
try {
  console.log(
    `PostgreSQL 15 on 127.0.0.1:${cluster.port}; ${cpus().length} cores; ${ROUNDS} rounds; ${CONCURRENCY} steps at once per worker` +
      (FLOW === null ? '' : `; flow limit fn:noop at most ${FLOW} at once`),
  );
  const floors = [];
  const throughput = new Map(WORKER_COUNTS.map((n) => [n, []]));
  // Warm-up, not reported: the first commits on a fresh cluster are slower.
  await measureFloor(admin, 0);
  for (let round = 1; round <= ROUNDS; round++) {
    floors.push(await measureFloor(admin, round));
    for (const workers of WORKER_COUNTS) {
      const result = await measureThroughput(cluster.url, admin, workers, round);
      throughput.get(workers).push(result);
      console.log(
        `  round ${round}: ${workers} worker(s) ${fmt(result.stepsPerSec)} steps/s (per worker: ${result.perWorker.join(', ')})`,
      );
    }
    console.log(`  round ${round}: floor ${fmt(floors.at(-1).txPerSec)} tx/s`);
  }
  const floorTx = median(floors.map((f) => f.txPerSec));
  const floorMs = median(floors.map((f) => f.msPerTx));
  console.log('\nthroughput: 200 runs x 10 chained no-op fn steps (median of rounds)');
  console.log(
    `  floor: 1 INSERT ... ON CONFLICT per commit, 1 connection: ${fmt(floorTx)} tx/s = ${fmt(floorMs, 3)} ms/tx`,
  );
  for (const [workers, results] of throughput) {
    const stepsPerSec = median(results.map((r) => r.stepsPerSec));
    const msPerStep = 1000 / stepsPerSec;
    const spread = results.map((r) => fmt(r.stepsPerSec)).join(' / ');
    const goal = workers === 4 ? `  goal >= ${fmt(GOAL)}: ${stepsPerSec >= GOAL ? 'met' : 'NOT met'}` : '';
    const delta = msPerStep - floorMs;
    console.log(
      `  ${workers} worker(s): ${fmt(stepsPerSec)} steps/s (${spread}); ${fmt(msPerStep, 3)} ms/step, ` +
        `${delta >= 0 ? '+' : ''}${fmt(delta, 3)} ms/step vs one floor commit (${fmt(stepsPerSec / floorTx, 2)}x the floor rate)${goal}`,
    );
  }
  console.log('  (a negative difference: several steps share one commit)');
  if (HISTORY > 0) {
    console.log(`\nclaim latency: a cycle claiming 1 due step, ${fmt(HISTORY)} finished runs stored vs none`);
    const latency = await measureClaimLatency(cluster.url, admin, HISTORY, ROUNDS);
    for (const row of latency) console.log(`  ${row}`);
  }
  console.log(
    `\nload average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await admin.end();
  await cluster.stop();
}
