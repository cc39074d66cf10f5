// Claim latency with history: does a claiming cycle get slower when the tables hold many finished runs?
// Two schemas, one empty and one with `history` finished runs (STEPS_PER_RUN succeeded steps and
// attempts each, 2 events each; inserted with INSERT ... SELECT generate_series, then ANALYZE). In
// each, runs of one no-op step are claimed one per cycle (each cycle also commits the previous
// claim, as a worker does); the cycles of the two schemas alternate, so noise hits both alike.
// Used by pg-bench.mjs (100,000 runs), and on its own for the 1,000,000-run figure beside the floor
// of the same run (one ~100-byte upsert per committed transaction):
//   node bench/pg-claim-latency.mjs   (BENCH_PG_HISTORY=1000000 BENCH_PG_ROUNDS=3 BENCH_PG_HISTORY_STEPS=2)
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startRun } from '../dist/engine/start-run.js';
import { cycleLockSql, cycleLockValues } from '../dist/store/postgres/cycle-locks.js';
import { PostgresStore } from '../dist/store/postgres/postgres-store.js';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { chainPlan, median, PAYLOAD } from './lib.mjs';

const SAMPLES_PER_ROUND = 200;
const STEPS_PER_RUN = Number(process.env.BENCH_PG_HISTORY_STEPS ?? 10);

/**
 * The history, in one transaction on one connection, with INSERT ... SELECT generate_series. The
 * rows are consistent by construction, so the foreign-key triggers are skipped
 * (session_replication_role = replica, the bulk-load setting; the test cluster's user is a
 * superuser): a row-by-row check of each step, attempt and event against its run would cost more
 * than writing it.
 */
async function insertHistory(admin, schema, history) {
  const client = await admin.connect();
  const q = (sql, values) => client.query(sql.replaceAll('S.', `"${schema}".`), values);
  const at = Date.now() - 86_400_000;
  const id = "'h' || lpad(g::text, 8, '0')";
  const started = performance.now();
  try {
    await q('BEGIN; SET LOCAL session_replication_role = replica');
    await q(
      `INSERT INTO S.runs (id, plan_name, plan_hash, inputs, workspace, status, attempts_total, created_at,
         updated_at, finished_at, concurrency, next_due_at, running_count)
       SELECT ${id}, 'history', 'h', '{}', '/w', 'succeeded', $3, $1::bigint + g, $1::bigint + g, $1::bigint + g, 1, NULL, 0
       FROM generate_series(1, $2::int) g`,
      [at, history, STEPS_PER_RUN],
    );
    await q(
      `INSERT INTO S.run_plans (run_id, plan) SELECT ${id}, '{}'::json FROM generate_series(1, $1::int) g`,
      [history],
    );
    await q(
      `INSERT INTO S.steps (run_id, step_id, position, fn, status, attempt, tries, started_at, updated_at, result)
       SELECT ${id}, 's' || k, k - 1, 'noop', 'succeeded', 1, 1, $1, $1, '{"summary":"done","outputs":[]}'::json
       FROM generate_series(1, $2::int) g, generate_series(1, $3::int) k`,
      [at, history, STEPS_PER_RUN],
    );
    await q(
      `INSERT INTO S.attempts (run_id, step_id, attempt, owner, started_at, ended_at, outcome, summary)
       SELECT ${id}, 's' || k, 1, 'history', $1, $1, 'succeeded', 'done'
       FROM generate_series(1, $2::int) g, generate_series(1, $3::int) k`,
      [at, history, STEPS_PER_RUN],
    );
    await q(
      `INSERT INTO S.events (run_id, at, type, step_id, data)
       SELECT ${id}, $1::bigint + g, t, NULL, '{}'::json
       FROM generate_series(1, $2::int) g, unnest(ARRAY['run.created', 'run.succeeded']) t`,
      [at, history],
    );
    await q('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
  await admin.query(
    ['runs', 'steps', 'attempts', 'events'].map((table) => `ANALYZE "${schema}".${table}`).join('; '),
  );
  return (performance.now() - started) / 1000;
}

/** A worker's loop on one store: each call commits the last claim and claims the next due step. */
function claimer(store) {
  let pending = [];
  return async () => {
    const now = Date.now();
    const started = performance.now();
    const { claimed } = await store.cycle({
      owner: 'bench',
      now,
      leaseMs: 30_000,
      completions: pending,
      claimLimit: 1,
      random: Math.random,
    });
    const ms = performance.now() - started;
    if (claimed.length !== 1) throw new Error(`expected one claim, got ${claimed.length}`);
    pending = claimed.map((c) => ({
      runId: c.runId,
      stepId: c.stepId,
      attempt: c.attempt,
      owner: c.owner,
      outcome: { ok: true, summary: 'done', outputs: [] },
      startedAt: now,
      endedAt: Date.now(),
      logPath: null,
    }));
    return ms;
  };
}

const p95 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)];

export async function measureClaimLatency(url, admin, history, rounds) {
  const schemas = { empty: 'cl_empty', history: 'cl_history' };
  const stores = {};
  for (const [name, schema] of Object.entries(schemas))
    stores[name] = await PostgresStore.open(url, { schema });
  const lines = [];
  const figures = {};
  try {
    const seconds = await insertHistory(admin, schemas.history, history);
    lines.push(
      `inserted ${history.toLocaleString('en-US')} finished runs (${STEPS_PER_RUN} steps each) in ${seconds.toFixed(1)} s`,
    );
    const plan = chainPlan('claim', 1);
    const samples = { empty: [], history: [] };
    const wake = { empty: [], history: [] };
    for (let round = 1; round <= rounds; round++) {
      for (const name of Object.keys(stores)) {
        for (let i = 0; i < SAMPLES_PER_ROUND + 1; i++)
          await startRun(stores[name], { plan, runId: `c${round}_${i}`, workspace: '/tmp' });
      }
      const claim = { empty: claimer(stores.empty), history: claimer(stores.history) };
      for (let i = 0; i < SAMPLES_PER_ROUND; i++) {
        for (const name of Object.keys(stores)) {
          samples[name].push(await claim[name]());
          const started = performance.now();
          await stores[name].nextWakeAt();
          wake[name].push(performance.now() - started);
        }
      }
    }
    for (const name of Object.keys(stores)) {
      lines.push(
        `${name === 'empty' ? 'no history' : `${history.toLocaleString('en-US')} finished runs`}: ` +
          `cycle median ${median(samples[name]).toFixed(2)} ms, p95 ${p95(samples[name]).toFixed(2)} ms; ` +
          `nextWakeAt median ${median(wake[name]).toFixed(2)} ms (${samples[name].length} samples)`,
      );
    }
    const ratio = median(samples.history) / median(samples.empty);
    lines.push(
      `history / no history: cycle ${ratio.toFixed(2)}x, nextWakeAt ${(median(wake.history) / median(wake.empty)).toFixed(2)}x`,
    );
    figures.cycleMsEmpty = median(samples.empty);
    figures.cycleMsHistory = median(samples.history);
  } finally {
    for (const store of Object.values(stores)) await store.close();
  }
  return Object.assign(lines, { figures });
}

/** The floor: autocommit upserts of ~100 bytes on one connection, ms per committed transaction. */
async function measureFloorMs(admin, txns = 1000) {
  await admin.query(
    'DROP TABLE IF EXISTS claim_floor; CREATE TABLE claim_floor (k text PRIMARY KEY, payload text)',
  );
  const client = await admin.connect();
  try {
    const started = performance.now();
    for (let i = 0; i < txns; i++) {
      await client.query(
        'INSERT INTO claim_floor (k, payload) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET payload = excluded.payload',
        [`k${i % 50}`, PAYLOAD],
      );
    }
    return (performance.now() - started) / txns;
  } finally {
    client.release();
    await admin.query('DROP TABLE claim_floor');
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const history = Number(process.env.BENCH_PG_HISTORY ?? 1_000_000);
  const rounds = Number(process.env.BENCH_PG_ROUNDS ?? 3);
  const cluster = await startCluster();
  const admin = new pg.Pool({ connectionString: cluster.url, max: 2 });
  try {
    const floorBefore = await measureFloorMs(admin);
    const lines = await measureClaimLatency(cluster.url, admin, history, rounds);
    const floorMs = (floorBefore + (await measureFloorMs(admin))) / 2;
    for (const line of lines) console.log(line);
    // The claim's lock statement on the history schema: which scans of runs and steps it plans.
    const values = cycleLockValues({
      completionRunIds: [],
      reclaimBefore: Date.now(),
      reclaimLimit: 100,
      claimRuns: 64,
      now: Date.now(),
      runId: null,
      functions: null,
      exclude: [],
    });
    const { rows } = await admin.query(`EXPLAIN ${cycleLockSql('"cl_history"')}`, values);
    const scans = rows.map((row) => row['QUERY PLAN']).filter((line) => /Scan/.test(line));
    console.log(`claim lock statement's scans:\n${scans.map((line) => `  ${line.trim()}`).join('\n')}`);
    const { cycleMsEmpty, cycleMsHistory } = lines.figures;
    console.log(
      `floor: ${floorMs.toFixed(3)} ms per committed upsert (mean of before and after); cycle ${(cycleMsEmpty / floorMs).toFixed(2)}x the floor with no history, ${(cycleMsHistory / floorMs).toFixed(2)}x with ${history.toLocaleString('en-US')} finished runs`,
    );
    console.log(
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await admin.end();
    await cluster.stop();
  }
}
