// A rerun of the last step of a finished 10,000-step run (a chain s1 -> ... -> s10000 of `fn: noop`
// steps): `Store.rerunFrom` on a store handle opened just before (the run finished, so no cache
// holds it: the rerun loads its 10,000 step rows and its plan, decides, and commits one fsynced
// transaction), median of RERUNS; goal <= 200 ms. Beside it its floor: `getRun` of the same run on
// a fresh handle (the read every change of that run starts with), and the real command
// (`baton rerun <run> --from s10000 --json`, dist/cli/baton.cjs) from spawn to exit, beside a bare
// `node -e 0`. The run is stored with its first 9,999 steps done (`completedSteps`, as an imported
// run's) and its last step run by the engine, so the rerun finds a step that ran.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun } from '../../dist/engine/start-run.js';
import { assert, chainPlan, emit, median, noopEngine, now, openStore, tempHome } from '../lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', '..', 'dist', 'cli', 'baton.cjs');
const STEPS = Number(process.env.BENCH_RERUN_STEPS ?? 10_000);
const RERUNS = 7;
const last = `s${STEPS}`;

const home = tempHome('rerun');
try {
  const plan = chainPlan('bench-rerun', STEPS);
  let store = openStore(home.dbPath);
  const done = plan.steps.slice(0, -1).map((step) => step.id);
  await startRun(store, { plan, runId: 'big', workspace: home.dir, completedSteps: done });
  await noopEngine(store, home.dir, 1).run({ kind: 'until-settled', runId: 'big' });
  assert((await store.getRun('big'))?.status === 'succeeded', 'the 10,000-step run did not succeed');
  await store.close();

  const rerunMs = [];
  const floorMs = [];
  for (let i = 0; i < RERUNS; i++) {
    store = openStore(home.dbPath);
    let start = now();
    const read = await store.getRun('big');
    floorMs.push(now() - start);
    assert(read?.steps.length === STEPS, `read ${read?.steps.length} steps`);
    await store.close();
    store = openStore(home.dbPath);
    start = now();
    const summary = await store.rerunFrom('big', { from: last, by: 'bench' }, Date.now());
    rerunMs.push(now() - start);
    assert(summary.status === 'running', `the rerun left the run ${summary.status}`);
    await store.close();
  }
  const rerun = await (async () => {
    store = openStore(home.dbPath);
    try {
      return (await store.getRun('big'))?.steps.at(-1);
    } finally {
      await store.close();
    }
  })();
  assert(rerun?.status === 'ready' && rerun.attempt === 1, `last step ${rerun?.status} #${rerun?.attempt}`);

  const time = (args) => {
    const start = now();
    const child = spawnSync(process.execPath, args, { encoding: 'utf8' });
    assert(child.status === 0, `${args.join(' ')}: exit ${child.status}: ${child.stderr}`);
    return now() - start;
  };
  const cliMs = [];
  const nodeMs = [];
  for (let i = 0; i < 5; i++) {
    nodeMs.push(time(['-e', '0']));
    cliMs.push(time([CLI, '--home', home.dir, 'rerun', 'big', '--from', last, '--json']));
  }
  emit({
    steps: STEPS,
    rerunMs: median(rerunMs),
    rerunFloorMs: median(floorMs),
    cliMs: median(cliMs),
    cliNodeMs: median(nodeMs),
  });
} finally {
  home.dispose();
}
