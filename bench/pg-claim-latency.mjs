// Claim latency with history: does a claiming cycle get slower when the tables hold many finished runs?
// Two schemas, one empty and one with `history` finished runs (10 succeeded steps and attempts each,
// 2 events each; inserted with generate_series, then ANALYZE). In each, runs of one no-op step are
// claimed one per cycle (each cycle also commits the previous claim, as a worker does); the cycles
// of the two schemas alternate, so noise hits both alike.
import { performance } from 'node:perf_hooks';
import { startRun } from '../dist/engine/start-run.js';
import { PostgresStore } from '../dist/store/postgres/postgres-store.js';
import { chainPlan, median } from './lib.mjs';

const SAMPLES_PER_ROUND = 200;
const STEPS_PER_RUN = 10;

async function insertHistory(admin, schema, history) {
  const q = (sql, values) => admin.query(sql.replaceAll('S.', `"${schema}".`), values);
  const at = Date.now() - 86_400_000;
  const started = performance.now();
  await q(
    `INSERT INTO S.runs (id, plan_name, plan_hash, inputs, workspace, status, attempts_total, created_at,
       updated_at, finished_at, concurrency, next_due_at, running_count)
     SELECT 'h' || lpad(g::text, 8, '0'), 'history', 'h', '{}', '/w', 'succeeded', $3, $1::bigint + g, $1::bigint + g, $1::bigint + g, 1, NULL, 0
     FROM generate_series(1, $2::int) g`,
    [at, history, STEPS_PER_RUN],
  );
  await q(
    `INSERT INTO S.run_plans (run_id, plan) SELECT id, '{}'::json FROM S.runs WHERE plan_name = 'history'`,
  );
  await q(
    `INSERT INTO S.steps (run_id, step_id, position, fn, status, attempt, tries, started_at, updated_at, result)
     SELECT 'h' || lpad(g::text, 8, '0'), 's' || k, k - 1, 'noop', 'succeeded', 1, 1, $1, $1,
       '{"summary":"done","outputs":[]}'::json
     FROM generate_series(1, $2::int) g, generate_series(1, $3::int) k`,
    [at, history, STEPS_PER_RUN],
  );
  await q(
    `INSERT INTO S.attempts (run_id, step_id, attempt, owner, started_at, ended_at, outcome, summary)
     SELECT 'h' || lpad(g::text, 8, '0'), 's' || k, 1, 'history', $1, $1, 'succeeded', 'done'
     FROM generate_series(1, $2::int) g, generate_series(1, $3::int) k`,
    [at, history, STEPS_PER_RUN],
  );
  await q(
    `INSERT INTO S.events (run_id, at, type, step_id, data)
     SELECT id, created_at, t, NULL, '{}'::json FROM S.runs, unnest(ARRAY['run.created', 'run.succeeded']) t
     WHERE plan_name = 'history'`,
  );
  await q('ANALYZE S.runs; ANALYZE S.steps; ANALYZE S.attempts; ANALYZE S.events');
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
  } finally {
    for (const store of Object.values(stores)) await store.close();
  }
  return lines;
}
