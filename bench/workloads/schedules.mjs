// Schedules (store/schedules/): what 1,000 stored schedules cost a `baton check` with nothing due,
// and how long the tick of 1,000 due slots takes to commit, on SQLite and PostgreSQL.
// - idle check: two homes with 5 finished runs each, one also holding 1,000 schedules none of which
//   is due (a yearly cron); `baton check` (dist/cli/baton.cjs, its idle path) and the full check
//   (dist/cli/main.js, the engine's cycle and nextWakeAt) timed alternately, medians. Goal: the
//   schedules add <= 10 ms. Process times on a loaded machine vary by more than that, so the same
//   store work (open, a cycle, nextWakeAt, close) is also timed in this process, paired.
// - tick: 1,000 every-minute schedules (overlap allow), then the cycles at the minute: they decide
//   every slot and store 1,000 runs, at most 100 per cycle's transaction. Floor of the same run: 1,000 runs of the
//   same plan stored at once by createRun (one group commit on SQLite; one statement each on
//   PostgreSQL, concurrently). Goal: <= 1 s on both stores.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validatePlanObject } from '../../dist/core/plan/parse.js';
import { Engine } from '../../dist/engine/engine.js';
import { PostgresStore } from '../../dist/store/postgres/postgres-store.js';
import { startCluster } from '../../scripts/pg-cluster.mjs';
import {
  assert,
  chainPlan,
  createRuns,
  emit,
  median,
  noopExecutors,
  now,
  openStore,
  tempHome,
} from '../lib.mjs';

const SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 1000);
const INVOCATIONS = Number(process.env.BENCH_CHECK_INVOCATIONS ?? 10);
const STORE_SAMPLES = Number(process.env.BENCH_SCHEDULE_SAMPLES ?? 50);
const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', '..', 'dist', 'cli', 'baton.cjs');
const ESM_CLI = join(here, '..', '..', 'dist', 'cli', 'main.js');
const T0 = Date.parse('2026-12-03T00:00:00Z');
const plan = validatePlanObject({ name: 'tick', steps: [{ id: 'work', fn: 'noop' }] }, 'bench');

const schedule = (name, rules, workspace, at = T0) => ({
  name,
  plan,
  planHash: 'h',
  inputs: {},
  workspace,
  rules: { overlap: 'allow', catchUpMs: 3_600_000, startAt: null, endAt: null, ...rules },
  now: at,
});

async function addSchedules(store, count, rules, workspace, at) {
  for (let i = 0; i < count; i++)
    await store.addSchedule(schedule(`s${String(i).padStart(5, '0')}`, rules, workspace, at));
}

/** A home with 5 finished runs, and `schedules` schedules that are not due for a year. */
async function idleHome(label, schedules) {
  const home = tempHome(label);
  const store = openStore(home.dbPath);
  await createRuns(store, chainPlan('bench-check', 3), 5, home.dir);
  await new Engine({ store, executors: noopExecutors(), home: home.dir, owner: 'bench' }).run({
    kind: 'drain',
  });
  await addSchedules(store, schedules, { timing: { cron: '0 0 1 1 *', tz: 'UTC' } }, home.dir, Date.now());
  await store.close();
  return home;
}

function timeCheck(cli, home) {
  const start = now();
  const result = spawnSync(process.execPath, [cli, 'check', '--home', home.dir], { encoding: 'utf8' });
  const ms = now() - start;
  assert(
    result.status === 0 && result.stdout.includes('nothing due'),
    `check: ${result.stdout}${result.stderr}`,
  );
  return ms;
}

async function idleFigures() {
  const none = await idleHome('sched-none', 0);
  const many = await idleHome('sched-many', SCHEDULES);
  try {
    for (const cli of [CLI, ESM_CLI]) for (const home of [none, many]) timeCheck(cli, home);
    const samples = { none: [], many: [], fullNone: [], fullMany: [] };
    for (let i = 0; i < INVOCATIONS; i++) {
      samples.none.push(timeCheck(CLI, none));
      samples.many.push(timeCheck(CLI, many));
      samples.fullNone.push(timeCheck(ESM_CLI, none));
      samples.fullMany.push(timeCheck(ESM_CLI, many));
    }
    // The same store work in this process, where process start-up noise does not drown it: what a
    // check does with its store (open, one cycle, nextWakeAt, close), median of STORE_SAMPLES each.
    const storeWork = async (home) => {
      const start = now();
      const store = openStore(home.dbPath);
      await store.cycle({
        owner: 'bench',
        now: Date.now(),
        leaseMs: 30_000,
        completions: [],
        claimLimit: 8,
        random: () => 0,
      });
      await store.nextWakeAt();
      await store.close();
      return now() - start;
    };
    const work = { none: [], many: [] };
    for (let i = 0; i < STORE_SAMPLES; i++) {
      work.none.push(await storeWork(none));
      work.many.push(await storeWork(many));
    }
    return {
      storeWorkNoSchedulesMs: median(work.none),
      storeWorkSchedulesMs: median(work.many),
      storeWorkExtraMs: median(work.many.map((ms, i) => ms - work.none[i])),
      checkNoSchedulesMs: median(samples.none),
      checkSchedulesMs: median(samples.many),
      checkExtraMs: median(samples.many.map((ms, i) => ms - samples.none[i])),
      fullCheckNoSchedulesMs: median(samples.fullNone),
      fullCheckSchedulesMs: median(samples.fullMany),
      fullCheckExtraMs: median(samples.fullMany.map((ms, i) => ms - samples.fullNone[i])),
    };
  } finally {
    none.dispose();
    many.dispose();
  }
}

/** One cycle at the minute ticks every schedule's slot; the floor stores as many runs by createRun. */
async function tickFigures(store, workspace) {
  await addSchedules(store, SCHEDULES, { timing: { everyMs: 60_000 } }, workspace, T0);
  const cycle = (at) =>
    store.cycle({
      owner: 'bench',
      now: at,
      leaseMs: 60_000,
      completions: [],
      claimLimit: 0,
      random: () => 0,
    });
  await cycle(T0 + 1);
  const start = now();
  // A cycle starts at most SLOT_RUNS_PER_CYCLE runs (100): the cycles at the minute, one after another.
  for (let started = 0, cycles = 0; started < SCHEDULES && cycles < SCHEDULES; cycles++)
    started += (await cycle(T0 + 60_000)).slotRunsStarted ?? 0;
  const tickMs = now() - start;
  const runs = await store.listRuns({ limit: SCHEDULES * 3 });
  assert(runs.length === SCHEDULES, `the tick started ${runs.length} runs, not ${SCHEDULES}`);
  const floorStart = now();
  await Promise.all(
    Array.from({ length: SCHEDULES }, (_, i) =>
      store.createRun({ id: `floor-${i}`, plan, planHash: 'h', inputs: {}, workspace, now: T0 }),
    ),
  );
  const floorMs = now() - floorStart;
  return { tickMs, floorMs };
}

const idle = await idleFigures();
const home = tempHome('sched-tick');
let sqlite;
try {
  const store = openStore(home.dbPath);
  sqlite = await tickFigures(store, home.dir);
  await store.close();
} finally {
  home.dispose();
}
const cluster = await startCluster();
let pg;
try {
  const store = await PostgresStore.open(cluster.url, { schema: 'bench_schedules' });
  pg = await tickFigures(store, tempHome('sched-pg').dir);
  await store.close();
} finally {
  await cluster.stop();
}
emit({
  schedules: SCHEDULES,
  ...idle,
  sqliteTickMs: sqlite.tickMs,
  sqliteTickFloorMs: sqlite.floorMs,
  pgTickMs: pg.tickMs,
  pgTickFloorMs: pg.floorMs,
});
