// A user's process, for the api-* workloads: imports only the package (the entry package.json
// `exports` names, as `import … from 'baton-steps'` does), opens Baton on a fresh SQLite home and
// runs no-op fn steps through the public API. Prints one `API_RESULT <json>` line; its parent
// times it from the spawn and preloads bench/max-rss.cjs for its peak RSS.
// Usage: node api-app.mjs <home> w <runs> <steps> <concurrency>   runs started at once, one worker
//        node api-app.mjs <home> seq <steps>                       one run, baton.run (no worker)
// Times are Date.now() (epoch ms), so the parent can put them beside its own spawn time.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const importStart = Date.now();
const { Baton, defineWorkflow } = await import(pathToFileURL(join(root, manifest.exports['.'].default)).href);
const imported = Date.now();

const PAYLOAD = 'x'.repeat(100);
const [home, mode, ...args] = process.argv.slice(2);

/** A chain s1 -> … -> sN of no-op steps; `onStep(i)` is told when step i runs. */
function chain(name, length, onStep) {
  let wf = defineWorkflow({ name, limits: { maxSteps: Math.max(50, length * 2) } });
  for (let i = 1; i <= length; i++) {
    const run = () => {
      onStep(i);
      return PAYLOAD;
    };
    wf = i === 1 ? wf.step(`s${i}`, run) : wf.step(`s${i}`, { dependsOn: [`s${i - 1}`] }, run);
  }
  return wf;
}

const out = (result) =>
  process.stdout.write(`API_RESULT ${JSON.stringify({ importStart, imported, ...result })}\n`);

if (mode === 'w') {
  const [runs, steps, concurrency] = args.map(Number);
  let lastSteps = 0;
  let stepsRun = 0;
  let allLastStepsRan;
  const lastStepsRan = new Promise((resolve) => {
    allLastStepsRan = resolve;
  });
  const wf = chain('bench-api-w', steps, (i) => {
    stepsRun++;
    if (i === steps && ++lastSteps === runs) allLastStepsRan();
  });
  const baton = Baton.open({ home, concurrency });
  const opened = Date.now();
  baton.register(wf);
  const worker = baton.worker();
  const firstStart = Date.now();
  const ids = await Promise.all(Array.from({ length: runs }, () => baton.start(wf, {})));
  const allStarted = Date.now();
  const stepsRunWhileStarting = stepsRun;
  await lastStepsRan;
  // The last steps ran; their commits come in the worker's next cycle. Look often, only now.
  let list;
  for (;;) {
    list = await baton.store.listRuns({ limit: runs * 2 });
    if (list.length === runs && list.every((r) => r.status === 'succeeded')) break;
    if (list.some((r) => r.status !== 'running' && r.status !== 'succeeded')) {
      throw new Error(`a run ended ${list.find((r) => r.status !== 'running').status}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const end = Date.now();
  const report = await worker.stop(1000);
  await baton.close();
  out({
    opened,
    firstStart,
    allStarted,
    stepsRunWhileStarting,
    end,
    runs: ids.length,
    attemptsCommitted: report.attemptsCommitted,
    lastFinishedAt: Math.max(...list.map((r) => r.finishedAt ?? 0)),
  });
} else if (mode === 'seq') {
  const [steps] = args.map(Number);
  let firstStep = null;
  let ran = 0;
  const wf = chain('bench-api-seq', steps, () => {
    firstStep ??= Date.now();
    ran++;
  });
  const baton = Baton.open({ home });
  const opened = Date.now();
  const results = await baton.run(wf, {});
  const end = Date.now();
  await baton.close();
  out({ opened, firstStep, end, steps, ran, results: Object.keys(results).length });
} else {
  throw new Error(`unknown mode ${mode}`);
}
