// Child of bench/workloads/big-plans.mjs: defines a workflow with the TypeScript API
// (defineWorkflow + step, from the package entry) and starts it with `baton.start` in a fresh
// home, as a program would. Prints `BENCH_API_MS <ms>`: from the first `step` call to `start`
// resolving (valid) or throwing PLAN_INVALID (bad-dep, cycle; the message goes to stderr).
// Usage: node -r bench/max-rss.cjs bench/big-plan-api.mjs <valid|bad-dep|cycle> <steps> <home>
import { performance } from 'node:perf_hooks';
import { Baton, defineWorkflow } from '../dist/package/index.js';
import { BAD_DEP_STEP, blockSteps, cycleSteps } from './big-plan-shapes.mjs';

const [kind, count, home] = [process.argv[2], Number(process.argv[3]), process.argv[4]];
const shape =
  kind === 'cycle'
    ? cycleSteps(count, (id, dependsOn) => ({ id, dependsOn }))
    : blockSteps(count / 100, (id, dependsOn) => ({ id, dependsOn }));
if (kind === 'bad-dep') shape[BAD_DEP_STEP].dependsOn = ['nope'];
const noop = () => 'ok';
const baton = Baton.open({ home });
const start = performance.now();
let workflow = defineWorkflow({ name: 'big', limits: { maxSteps: 100_000, concurrency: 256 } });
for (const { id, dependsOn } of shape) {
  workflow = dependsOn.length === 0 ? workflow.step(id, noop) : workflow.step(id, { dependsOn }, noop);
}
let code = 0;
try {
  await baton.start(workflow, {});
} catch (error) {
  if (error?.code !== 'PLAN_INVALID') throw error;
  process.stderr.write(`${error.message}\n`);
  code = 2;
}
process.stdout.write(`BENCH_API_MS ${performance.now() - start}\n`);
await baton.close();
process.exitCode = code;
