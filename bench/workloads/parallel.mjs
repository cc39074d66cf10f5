// 200 runs x 10 sequential no-op steps, drained by one Engine at the given concurrency.
// Usage: node parallel.mjs <concurrency>
import { Engine } from '../../dist/engine/engine.js';
import {
  assert,
  chainPlan,
  createRuns,
  emit,
  noopExecutors,
  now,
  openStore,
  profiled,
  tempHome,
} from '../lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS_COUNT ?? 200);
const STEPS = 10;
const concurrency = Number(process.argv[2] ?? 256);
const home = tempHome(`parallel-${concurrency}`);
const store = openStore(home.dbPath);
try {
  const ids = await createRuns(store, chainPlan('bench-parallel', STEPS), RUNS, home.dir);
  const engine = new Engine({
    store,
    executors: noopExecutors(),
    home: home.dir,
    owner: `bench:${process.pid}`,
    concurrency,
  });
  const start = now();
  const report = await profiled(`parallel-${concurrency}`, () => engine.run({ kind: 'drain' }));
  const seconds = (now() - start) / 1000;

  const total = RUNS * STEPS;
  const runs = await store.listRuns({ limit: RUNS * 2 });
  const succeeded = runs.filter((run) => run.status === 'succeeded').length;
  const attempts = (await Promise.all(ids.map((id) => store.getAttempts(id)))).flat();
  const committed = attempts.filter((a) => a.outcome === 'succeeded').length;
  assert(
    succeeded === RUNS,
    `${succeeded}/${RUNS} runs succeeded (statuses: ${[...new Set(runs.map((r) => r.status))]})`,
  );
  assert(
    report.attemptsCommitted === total,
    `engine committed ${report.attemptsCommitted}, expected ${total}`,
  );
  assert(
    committed === total && attempts.length === total,
    `${committed} succeeded attempts of ${attempts.length} stored, expected ${total}`,
  );
  emit({ concurrency, runs: RUNS, steps: total, seconds, stepsPerSec: total / seconds, report });
} finally {
  await store.close();
  home.dispose();
}
