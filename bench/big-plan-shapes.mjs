// The shapes of the big-plan benchmarks (bench/workloads/big-plans.mjs, big-plan-run.mjs and the
// API child bench/big-plan-api.mjs), each step made by `step(id, dependsOn)`:
// - blocks: `blocks` blocks of 100 steps, a hub, 98 workers that depend on it and a merge that
//   depends on the 98; the next block's hub depends on the merge (as in hostile-plans.mjs);
// - cycle: `count` steps, each depending on the one before and the first on the last.

export function blockSteps(blocks, step) {
  const steps = [];
  for (let b = 0; b < blocks; b++) {
    const hub = `hub-${b}`;
    steps.push(step(hub, b > 0 ? [`merge-${b - 1}`] : []));
    const workers = Array.from({ length: 98 }, (_, w) => `w-${b}-${w}`);
    for (const id of workers) steps.push(step(id, [hub]));
    steps.push(step(`merge-${b}`, workers));
  }
  return steps;
}

export function cycleSteps(count, step) {
  return Array.from({ length: count }, (_, i) => step(`s${i}`, [`s${(i + count - 1) % count}`]));
}

/** The step id whose dependency a "bad dependency" plan replaces with an unknown one. */
export const BAD_DEP_STEP = 5_000;
