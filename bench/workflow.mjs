// npm run bench:workflow — issue 5's figures: the stored checkpoint size of a run whose step
// returns 1 KB, 1 MB and 50 MB, and the per-step cost of ctx.effect (an intent and a result
// written to the store around the effect) against the same step without it. Medians of BENCH_RUNS
// (default 5) runs, each in a fresh Baton home; SQLite with synchronous=FULL.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Baton, defineWorkflow } from '../dist/index.js';
import { storedRunBytes } from '../scripts/stored-run-bytes.mjs';
import { median } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const STEPS = 200;

async function inHome(fn) {
  const home = mkdtempSync(join(tmpdir(), 'baton-bench-wf-'));
  const baton = Baton.open({ home, pollMs: 5 });
  try {
    return await fn(baton, home);
  } finally {
    await baton.close();
    rmSync(home, { recursive: true, force: true });
  }
}

const sizes = defineWorkflow({ name: 'sizes', inputs: { bytes: null } })
  .step('produce', (ctx) => 'x'.repeat(Number(ctx.inputs.bytes)))
  .step('use', { dependsOn: ['produce'] }, (ctx) => ctx.results.produce.length);

function chain(name, withEffect) {
  let wf = defineWorkflow({ name, limits: { maxSteps: STEPS * 2 } });
  for (let i = 1; i <= STEPS; i++) {
    const run = withEffect ? (ctx) => ctx.effect('send', () => i) : () => i;
    wf = i === 1 ? wf.step(`s${i}`, run) : wf.step(`s${i}`, { dependsOn: [`s${i - 1}`] }, run);
  }
  return wf;
}

const checkpoint = {};
for (const [label, bytes] of [
  ['1 KB', 1024],
  ['1 MB', 1024 * 1024],
  ['50 MB', 50 * 1024 * 1024],
]) {
  checkpoint[label] = await inHome(async (baton, home) => {
    await baton.run(sizes, { bytes: String(bytes) }, { runId: 'r' });
    return storedRunBytes(home, 'r');
  });
}

const msPerStep = { plain: [], effect: [] };
for (let run = 0; run < RUNS; run++) {
  for (const [key, withEffect] of [
    ['plain', false],
    ['effect', true],
  ]) {
    msPerStep[key].push(
      await inHome(async (baton) => {
        const wf = chain(`chain-${key}`, withEffect);
        baton.register(wf);
        const started = performance.now();
        await baton.run(wf, {}, { runId: 'c' });
        return (performance.now() - started) / STEPS;
      }),
    );
  }
}

console.log('stored checkpoint per run (steps, attempts, events, plan of the run):');
for (const [label, bytes] of Object.entries(checkpoint)) {
  console.log(`  output ${label.padEnd(5)}  ${(bytes / 1024).toFixed(1)} KB   (goal < 100 KB)`);
}
const plain = median(msPerStep.plain);
const effect = median(msPerStep.effect);
console.log(`${STEPS} sequential steps, median of ${RUNS}:`);
console.log(`  without ctx.effect  ${plain.toFixed(3)} ms/step`);
console.log(
  `  with ctx.effect     ${effect.toFixed(3)} ms/step   (+${(effect - plain).toFixed(3)} ms: intent and result, 2 transactions)`,
);
