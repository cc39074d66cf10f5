// 1 run x 200 sequential no-op steps, driven by one Engine in until-settled mode.
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

const STEPS = Number(process.env.BENCH_SEQ_STEPS ?? 200);
const home = tempHome('sequential');
const store = openStore(home.dbPath);
try {
  const [runId] = await createRuns(store, chainPlan('bench-sequential', STEPS), 1, home.dir);
  const engine = new Engine({
    store,
    executors: noopExecutors(),
    home: home.dir,
    owner: `bench:${process.pid}`,
    concurrency: 8,
  });
  const start = now();
  const report = await profiled('sequential', () => engine.run({ kind: 'until-settled', runId }));
  const ms = now() - start;
  const run = await store.getRun(runId);
  assert(run?.status === 'succeeded', `run ended ${run?.status}`);
  assert(
    report.attemptsCommitted === STEPS,
    `engine committed ${report.attemptsCommitted}, expected ${STEPS}`,
  );
  emit({ steps: STEPS, ms, msPerStep: ms / STEPS, report });
} finally {
  await store.close();
  home.dispose();
}
