// Issue 42 item 1: a fan-out of 1,000 items over a sub-plan (`plan:` steps), each child a one-step
// plan of a no-op fn step, driven by one Engine (drain, concurrency 256), beside W (200 runs x 10
// chained no-op steps, same engine, same concurrency) run in this same process just before. Each
// item starts its child run (a run created, with its row, steps and event), waits for it without a
// slot, and takes its result: the goal is a rate of at least 0.3x W's.
import { validatePlanObject } from '../../dist/core/plan/parse.js';
import { startRun } from '../../dist/engine/start-run.js';
import { assert, emit, noopEngine, now, openStore, tempHome, wRate } from '../lib.mjs';

const ITEMS = Number(process.env.BENCH_SUB_PLAN_ITEMS ?? 1_000);
const CONCURRENCY = 256;

const child = validatePlanObject({ name: 'bench-child', steps: [{ id: 'work', fn: 'noop' }] }, 'child');
const declared = validatePlanObject(
  {
    name: 'bench-sub-plans',
    limits: { concurrency: CONCURRENCY, maxSteps: ITEMS * 2 },
    steps: [
      {
        id: 'each',
        forEach: { items: `[${Array.from({ length: ITEMS }, (_, i) => i).join(',')}]`, maxItems: 10_000 },
        plan: { path: './child.yaml' },
      },
    ],
  },
  'bench',
);
// What loading the plan file does: the child plan kept in the step (workflow/load-plan-file.ts).
const plan = {
  ...declared,
  steps: declared.steps.map((step) => ({ ...step, subPlan: { ...step.subPlan, plan: child } })),
};

const wStepsPerSec = await wRate('sub-plans-w');
const home = tempHome('sub-plans');
const store = openStore(home.dbPath);
try {
  await startRun(store, { plan, runId: 'parent', workspace: home.dir });
  const start = now();
  const report = await noopEngine(store, home.dir, CONCURRENCY).run({ kind: 'drain' });
  const seconds = (now() - start) / 1000;
  const run = await store.getRun('parent');
  assert(run?.status === 'succeeded', `the parent ended ${run?.status}: ${run?.blockedReason}`);
  const result = (await store.getStepResults('parent', ['each'])).each;
  assert(result?.value?.length === ITEMS, `the group's result has ${result?.value?.length} items`);
  const children = (await store.listRuns({ limit: ITEMS + 10 })).filter((r) => r.planName === 'bench-child');
  assert(children.length === ITEMS, `${children.length} children, expected ${ITEMS}`);
  const itemsPerSec = ITEMS / seconds;
  emit({
    items: ITEMS,
    wStepsPerSec,
    itemsPerSec,
    vsW: itemsPerSec / wStepsPerSec,
    seconds,
    attempts: report.attemptsCommitted,
  });
} finally {
  await store.close();
  home.dispose();
}
