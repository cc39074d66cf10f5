// A 10,000-item fan-out of no-op fn steps (`forEach` over the list a first step returned), run by
// one Engine (drain, concurrency 256), beside W (200 runs x 10 chained no-op steps, same engine,
// same concurrency) run in this same process just before: the goal is a rate of at least 0.5x W's.
// The expansion is timed apart: the one cycle that claims the group, evaluates its items, appends
// 10,000 item steps to the plan snapshot and inserts their rows, and commits (goal <= 1 s).
import { validatePlanObject } from '../../dist/core/plan/parse.js';
import { startRun } from '../../dist/engine/start-run.js';
import { assert, emit, noopEngine, now, openStore, tempHome, wRate } from '../lib.mjs';

const ITEMS = Number(process.env.BENCH_FANOUT_ITEMS ?? 10_000);
const CONCURRENCY = 256;

const plan = validatePlanObject(
  {
    name: 'bench-fanout',
    limits: { concurrency: CONCURRENCY, maxSteps: ITEMS * 2 },
    steps: [
      { id: 'list', fn: 'list' },
      {
        id: 'each',
        fn: 'noop',
        dependsOn: ['list'],
        forEach: { items: 'steps.list.result', maxItems: 10_000 },
      },
    ],
  },
  'bench',
);

const random = () => 0;
const wStepsPerSec = await wRate('fanout-w');
const home = tempHome('fanout');
const store = openStore(home.dbPath);
try {
  await startRun(store, { plan, runId: 'fan', workspace: home.dir });
  // The list step by hand: claimed, then completed with the list, which makes the group due.
  const owner = 'bench-list';
  const [list] = (
    await store.cycle({ owner, now: Date.now(), leaseMs: 60_000, completions: [], claimLimit: 1, random })
  ).claimed;
  assert(list?.stepId === 'list', `claimed ${list?.stepId} instead of list`);
  const items = Array.from({ length: ITEMS }, (_, i) => i);
  const at = Date.now();
  await store.cycle({
    owner,
    now: at,
    leaseMs: 60_000,
    completions: [
      {
        runId: 'fan',
        stepId: 'list',
        attempt: list.attempt,
        owner,
        outcome: { ok: true, summary: 'listed', outputs: [], value: items },
        startedAt: at - 1,
        endedAt: at,
        logPath: null,
      },
    ],
    claimLimit: 0,
    random,
  });
  // The expansion: one cycle whose one claim is the group's.
  const expandStart = now();
  await store.cycle({ owner, now: Date.now(), leaseMs: 60_000, completions: [], claimLimit: 1, random });
  const expansionMs = now() - expandStart;
  const expanded = (await store.getEvents('fan')).find((event) => event.type === 'step.expanded');
  assert(expanded?.items === ITEMS, `expanded into ${expanded?.items} items, expected ${ITEMS}`);

  const start = now();
  const report = await noopEngine(store, home.dir, CONCURRENCY).run({ kind: 'drain' });
  const seconds = (now() - start) / 1000;
  const run = await store.getRun('fan');
  assert(run?.status === 'succeeded', `the fan-out run ended ${run?.status}: ${run?.blockedReason}`);
  const result = (await store.getStepResults('fan', ['each'])).each;
  assert(result?.value?.length === ITEMS, `the group's result has ${result?.value?.length} items`);
  // An item claimed by the expansion's cycle (claim limit 1 is the group's, so none) ran in the drain.
  assert(report.attemptsCommitted >= ITEMS - 1, `engine committed ${report.attemptsCommitted} of ${ITEMS}`);
  const itemsPerSec = ITEMS / seconds;
  emit({ items: ITEMS, wStepsPerSec, itemsPerSec, vsW: itemsPerSec / wStepsPerSec, expansionMs, seconds });
} finally {
  await store.close();
  home.dispose();
}
