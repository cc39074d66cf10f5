// Waiting runs (SQLite): does a store holding BENCH_WAITING_RUNS (default 10,000) runs, each with a
// step waiting for an approval, claim and list as fast as one without them? A waiting step holds
// no lease and is in no due-step scan (its timeout is its due time, and these have none), so the
// goal is the same cost: claiming <= 1.1x, the runs list and `baton status` <= 1.2x.
// Two homes, one with only the live runs to claim and one with the waiting runs as well (made the
// way a worker makes them: stored, then one cycle starts every wait). Each figure is the median
// over SAMPLES calls, the homes alternating so noise hits both alike; the home without waiting
// runs is each figure's floor.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validatePlanObject } from '../../dist/core/plan/parse.js';
import { startRun } from '../../dist/engine/start-run.js';
import { assert, chainPlan, claimer, emit, median, now, openStore, tempHome, timed } from '../lib.mjs';

const WAITING = Number(process.env.BENCH_WAITING_RUNS ?? 10_000);
const SAMPLES = Number(process.env.BENCH_WAITING_SAMPLES ?? 30);
const STATUS_INVOCATIONS = Number(process.env.BENCH_WAITING_INVOCATIONS ?? 7);
const LIVE_RUNS = Math.max(60, SAMPLES + 1);
const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', '..', 'dist', 'cli', 'baton.cjs');

const waitPlan = validatePlanObject(
  {
    name: 'needs-approval',
    steps: [
      { id: 'approve', wait: { for: 'approval', prompt: 'Send it?' } },
      { id: 'send', fn: 'noop', dependsOn: ['approve'] },
    ],
  },
  'bench',
);

/** Stores the waiting runs in groups (one commit each), then lets cycles start their waits. */
async function makeWaiting(store, count) {
  const started = now();
  for (let i = 0; i < count; i += 1000) {
    const group = [];
    for (let j = i; j < Math.min(count, i + 1000); j++) {
      group.push(
        startRun(store, { plan: waitPlan, runId: `w${String(j).padStart(6, '0')}`, workspace: '/tmp' }),
      );
    }
    await Promise.all(group);
  }
  for (;;) {
    const result = await store.cycle({
      owner: 'bench',
      now: Date.now(),
      leaseMs: 30_000,
      completions: [],
      claimLimit: 1000,
      random: Math.random,
    });
    assert(result.claimed.length === 0, 'a wait step was claimed');
    if (!result.settledUnclaimed) break;
  }
  return now() - started;
}

function status(home) {
  const started = now();
  const result = spawnSync(process.execPath, [CLI, '--home', home, 'status'], { encoding: 'utf8' });
  const ms = now() - started;
  assert(result.status === 0, `baton status exited ${result.status}: ${result.stderr}`);
  return ms;
}

const homes = { empty: tempHome('waiting-none'), waiting: tempHome('waiting-full') };
try {
  const stores = {};
  for (const [name, home] of Object.entries(homes)) stores[name] = openStore(home.dbPath);
  const buildMs = await makeWaiting(stores.waiting, WAITING);
  const plan = chainPlan('claim', 1);
  for (const store of Object.values(stores)) {
    for (let i = 0; i < LIVE_RUNS; i++) await startRun(store, { plan, runId: `c${i}`, workspace: '/tmp' });
  }
  const calls = {
    listMs: (s) => s.listRuns(),
    pageMs: (s) => s.listRunPage(),
    wakeMs: (s) => s.nextWakeAt(),
  };
  const keys = [...Object.keys(calls), 'claimMs', 'statusMs'];
  const samples = Object.fromEntries(
    Object.keys(stores).map((name) => [name, Object.fromEntries(keys.map((key) => [key, []]))]),
  );
  const claim = { empty: claimer(stores.empty), waiting: claimer(stores.waiting) };
  for (const name of Object.keys(stores)) for (const call of Object.values(calls)) await call(stores[name]);
  for (let i = 0; i < SAMPLES; i++) {
    for (const name of Object.keys(stores)) {
      for (const [key, call] of Object.entries(calls))
        samples[name][key].push(await timed(() => call(stores[name])));
      samples[name].claimMs.push(await claim[name]());
    }
  }
  const { total } = await stores.waiting.listWaitingSteps(1);
  assert(total === WAITING, `${total} steps wait, expected ${WAITING}`);
  for (const store of Object.values(stores)) await store.close();
  for (let i = 0; i < STATUS_INVOCATIONS; i++) {
    for (const name of Object.keys(homes)) samples[name].statusMs.push(status(homes[name].dir));
  }
  const result = { waitingRuns: WAITING, buildMs };
  for (const key of keys) {
    result[`${key}Empty`] = median(samples.empty[key]);
    result[`${key}Waiting`] = median(samples.waiting[key]);
    result[`${key}Ratio`] = result[`${key}Waiting`] / result[`${key}Empty`];
  }
  emit(result);
} finally {
  for (const home of Object.values(homes)) home.dispose();
}
