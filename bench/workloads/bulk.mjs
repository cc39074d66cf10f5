// Issue 42 items 3 and 4: operations over many runs, and labels.
// - `baton retry --blocked --class fatal` over BENCH_BULK_RUNS (default 10,000) blocked runs, the
//   whole process (goal <= 2 s), on SQLite and (unless BENCH_BULK_PG=0, or PostgreSQL is missing)
//   on PostgreSQL; beside it the floor: `baton status --limit 1` on the same store (a process that
//   opens the store and reads one row).
// - `baton status --label team=t3` over BENCH_LABEL_RUNS (default 100,000) runs, one in ten of that
//   label, against `baton status` on the same home (goal <= 1.2x), medians of alternating samples.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validatePlanObject } from '../../dist/core/plan/parse.js';
import { PostgresStore } from '../../dist/store/postgres/postgres-store.js';
import { SqliteStore } from '../../dist/store/sqlite/sqlite-store.js';
import { startCluster } from '../../scripts/pg-cluster.mjs';
import { assert, emit, median, now, tempHome } from '../lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '../../dist/cli/main.js');
const BLOCKED = Number(process.env.BENCH_BULK_RUNS ?? 10_000);
const LABELLED = Number(process.env.BENCH_LABEL_RUNS ?? 100_000);
const SAMPLES = Number(process.env.BENCH_LABEL_SAMPLES ?? 5);
const PG = process.env.BENCH_BULK_PG !== '0' && existsSync('/usr/lib/postgresql/15/bin/initdb');

const plan = validatePlanObject(
  { name: 'bulk', defaults: { retry: { maxAttempts: 1 } }, steps: [{ id: 's1', fn: 'noop' }] },
  'bench',
);

/** `count` runs, created 500 at a time (the SQLite store writes a burst in one transaction). */
async function createMany(store, count, labelsOf = () => undefined) {
  const at = Date.now() - count;
  for (let i = 0; i < count; i += 500) {
    const batch = [];
    for (let j = i; j < Math.min(count, i + 500); j++) {
      const labels = labelsOf(j);
      batch.push(
        store.createRun({
          id: `r${String(j).padStart(6, '0')}`,
          plan,
          planHash: 'h',
          inputs: {},
          workspace: '/tmp',
          now: at + j,
          ...(labels ? { labels } : {}),
        }),
      );
    }
    await Promise.all(batch);
  }
}

/** Every run's step claimed and failed as fatal: `count` blocked runs. */
async function blockAll(store, count) {
  let blocked = 0;
  let completions = [];
  for (;;) {
    const result = await store.cycle({
      owner: 'bench',
      now: Date.now(),
      leaseMs: 3_600_000,
      completions,
      claimLimit: 1000,
      random: Math.random,
    });
    blocked += completions.length;
    completions = result.claimed.map((claim) => ({
      runId: claim.runId,
      stepId: claim.stepId,
      attempt: claim.attempt,
      owner: 'bench',
      outcome: { ok: false, failureClass: 'fatal', message: 'down' },
      startedAt: Date.now(),
      endedAt: Date.now(),
      logPath: null,
    }));
    if (completions.length === 0) break;
  }
  assert(blocked === count, `blocked ${blocked} of ${count}`);
}

function cli(args, env = {}) {
  const started = now();
  const result = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  const ms = now() - started;
  assert(result.status === 0, `baton ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return { ms, stdout: result.stdout };
}

/** The retry itself and its floor, on the store `args` name. */
function retryFigures(args, env) {
  const floor = cli([...args, 'status', '--limit', '1'], env).ms;
  const retry = cli([...args, 'retry', '--blocked', '--class', 'fatal', '--json'], env);
  const answer = JSON.parse(retry.stdout);
  assert(answer.runs.length === BLOCKED, `retried ${answer.runs.length} of ${BLOCKED}`);
  assert(
    answer.runs.every((run) => run.outcome === 'retried'),
    'a run was refused',
  );
  return { retryMs: retry.ms, floorMs: floor };
}

const result = {};
const sqliteHome = tempHome('bulk-sqlite');
const labelHome = tempHome('bulk-labels');
try {
  // SQLite: the blocked runs made with synchronous OFF (setup only), then measured as shipped.
  const setup = SqliteStore.open(sqliteHome.dbPath, { synchronous: 'OFF' });
  await createMany(setup, BLOCKED);
  await blockAll(setup, BLOCKED);
  await setup.close();
  const sqlite = retryFigures(['--home', sqliteHome.dir], {});
  result.sqliteRetryMs = sqlite.retryMs;
  result.sqliteFloorMs = sqlite.floorMs;

  const labels = SqliteStore.open(labelHome.dbPath, { synchronous: 'OFF' });
  await createMany(labels, LABELLED, (i) => ({ team: `t${i % 10}` }));
  await labels.close();
  const samples = { all: [], label: [] };
  for (let i = 0; i < SAMPLES; i++) {
    const order = i % 2 === 0 ? ['all', 'label'] : ['label', 'all'];
    for (const which of order)
      samples[which].push(
        cli(['--home', labelHome.dir, 'status', ...(which === 'label' ? ['--label', 'team=t3'] : [])]).ms,
      );
  }
  const listed = cli(['--home', labelHome.dir, 'status', '--label', 'team=t3', '--json']).stdout;
  assert(
    JSON.parse(listed).every((run) => run.labels.team === 't3'),
    'a run of another label was listed',
  );
  result.statusMs = median(samples.all);
  result.statusLabelMs = median(samples.label);
  result.statusLabelRatio = result.statusLabelMs / result.statusMs;

  if (PG) {
    const cluster = await startCluster();
    try {
      const store = await PostgresStore.open(cluster.url, { schema: 'bulk' });
      await createMany(store, BLOCKED);
      await blockAll(store, BLOCKED);
      await store.close();
      const pg = retryFigures([], { BATON_DATABASE_URL: cluster.url, BATON_PG_SCHEMA: 'bulk' });
      result.pgRetryMs = pg.retryMs;
      result.pgFloorMs = pg.floorMs;
    } finally {
      await cluster.stop();
    }
  }
} finally {
  sqliteHome.dispose();
  labelHome.dispose();
}
emit(result);
