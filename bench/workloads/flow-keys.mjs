// Issue 43 item 3: keyed flow control. W (200 runs x 10 chained no-op steps, concurrency 256) with
// every step under `flow: { key: "customer:{{inputs.customer}}", concurrency: 100 }`, the 200 runs
// spread over 10 customers (10 distinct rendered keys, each with its limit stored by the first
// claim that meets it), beside W without flow control, both in this same process. The limits never
// bind (20 runs per key, one step of each at a time): what is measured is what flow control costs a
// claim and a step write. Goal: at least 0.9x W.
import { validatePlanObject } from '../../dist/core/plan/parse.js';
import { startRun } from '../../dist/engine/start-run.js';
import { assert, emit, noopEngine, now, openStore, tempHome, wRate } from '../lib.mjs';

const RUNS = 200;
const STEPS = 10;
const KEYS = 10;

const keyed = validatePlanObject(
  {
    name: 'bench-flow-keys',
    inputs: { customer: null },
    limits: { concurrency: 1, maxSteps: STEPS * 2 },
    defaults: { flow: { key: 'customer:{{inputs.customer}}', concurrency: 100 } },
    steps: Array.from({ length: STEPS }, (_, i) => ({
      id: `s${i + 1}`,
      fn: 'noop',
      ...(i > 0 ? { dependsOn: [`s${i}`] } : {}),
    })),
  },
  'bench',
);

async function keyedRate() {
  const home = tempHome('flow-keys');
  const store = openStore(home.dbPath);
  try {
    for (let i = 0; i < RUNS; i++) {
      const runId = `r${String(i + 1).padStart(4, '0')}`;
      await startRun(store, {
        plan: keyed,
        runId,
        workspace: home.dir,
        inputs: { customer: `c${i % KEYS}` },
      });
    }
    const start = now();
    const report = await noopEngine(store, home.dir).run({ kind: 'drain' });
    const seconds = (now() - start) / 1000;
    assert(
      report.attemptsCommitted === RUNS * STEPS,
      `committed ${report.attemptsCommitted} of ${RUNS * STEPS}`,
    );
    const limits = await store.listFlowLimits(Date.now());
    assert(limits.length === KEYS, `${limits.length} flow keys stored, expected ${KEYS}`);
    return (RUNS * STEPS) / seconds;
  } finally {
    await store.close();
    home.dispose();
  }
}

const wStepsPerSec = await wRate('flow-keys-w');
const keyedStepsPerSec = await keyedRate();
emit({ wStepsPerSec, keyedStepsPerSec, vsW: keyedStepsPerSec / wStepsPerSec });
