// A 10,000-step plan of `fn: noop` steps run by one Engine (drain, concurrency 256), beside W, the
// parallel workload (200 runs x 10 chained no-op steps, same engine, same concurrency) run in this
// same process just before: its goal is a rate of at least 0.5x W's. Run twice: by an engine in
// `drain` mode, as W is, and in `until-settled` mode for that run, as `baton run` and
// `Baton.result` drive it. The plan is 100 blocks of a
// hub, 98 workers that depend on it and a merge that depends on the 98 (the next hub depends on
// the merge), the shape of the hostile-plans benchmark, so up to 98 steps are due at once. The
// run's creation (`startRun`: validation was done before, storing its 10,000 steps) is timed
// apart from the engine's phase.
// Then `baton status <run>` and `baton status <run> --json` of the finished run, each the real
// command (dist/cli/baton.cjs) in a child process, median of STATUS_RUNS, beside the same
// commands on a finished 100-step run of the same shape and a floor for each: a `node -e` that
// opens the database with better-sqlite3 and reads what that command must read (below).
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validatePlanObject } from '../../dist/core/plan/parse.js';
import { startRun } from '../../dist/engine/start-run.js';
import { blockSteps } from '../big-plan-shapes.mjs';
import { assert, emit, median, noopEngine, now, openStore, profiled, tempHome, wRate } from '../lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', '..', 'dist', 'cli', 'baton.cjs');
const BLOCKS = Number(process.env.BENCH_BIG_BLOCKS ?? 100);
const CONCURRENCY = 256;
const STATUS_RUNS = 5;
/** The step columns a step's state is read from (src/store/sqlite/run-rows.ts STEP_COLUMNS). */
const STATE_COLUMNS = `step_id, status, attempt, tries, due_at, lease_owner, lease_expires_at, started_at, last_error,
  last_failure_class, fingerprint, fingerprint_repeats, result_json, blocked_reason, updated_at, input_tokens,
  output_tokens, cost_usd, first_started_at, on_fallback, interruptions`;

function blockPlan(name, blocks) {
  const steps = blockSteps(blocks, (id, dependsOn) => ({
    id,
    fn: 'noop',
    ...(dependsOn.length > 0 ? { dependsOn } : {}),
  }));
  return validatePlanObject(
    { name, limits: { concurrency: CONCURRENCY, maxSteps: steps.length * 2 }, steps },
    'bench',
  );
}

/**
 * Runs a block plan to its end, with the engine in `drain` mode (as W) or `until-settled` of this
 * run (as `baton run` and `Baton.result` drive one run); returns the creation and engine times.
 */
async function runBlocks(store, dir, runId, blocks, label, mode = 'drain') {
  const plan = blockPlan(`bench-${runId}`, blocks);
  let start = now();
  await startRun(store, { plan, runId, workspace: dir });
  const createMs = now() - start;
  start = now();
  const kind = mode === 'drain' ? { kind: 'drain' } : { kind: 'until-settled', runId };
  const report = await profiled(label, () => noopEngine(store, dir, CONCURRENCY).run(kind));
  const seconds = (now() - start) / 1000;
  const steps = plan.steps.length;
  const run = await store.getRun(runId);
  assert(run?.status === 'succeeded', `${runId}: ${run?.status} ${run?.blockedReason ?? ''}`);
  assert(report.attemptsCommitted === steps, `${runId}: committed ${report.attemptsCommitted} of ${steps}`);
  return { createMs, stepsPerSec: steps / seconds, seconds };
}

/** Median wall ms of a node command run STATUS_RUNS times (after one warm-up); checks its exit. */
function timeCommand(args, check) {
  const times = [];
  for (let i = 0; i <= STATUS_RUNS; i++) {
    const start = now();
    const child = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    const ms = now() - start;
    assert(child.status === 0, `${args.join(' ')}: exit ${child.status}: ${child.stderr}`);
    check(child.stdout);
    if (i > 0) times.push(ms);
  }
  return median(times);
}

const home = tempHome('big-run');
try {
  const w = await wRate('big-run-w');
  const store = openStore(home.dbPath);
  let big;
  let settled;
  try {
    await runBlocks(store, home.dir, 'small', 1, 'big-run-small');
    big = await runBlocks(store, home.dir, 'big', BLOCKS, 'big-run');
    settled = await runBlocks(store, home.dir, 'big-settled', BLOCKS, 'big-run-settled', 'until-settled');
  } finally {
    await store.close();
  }
  const steps = BLOCKS * 100;
  const status = (runId, json, count) =>
    timeCommand([CLI, '--home', home.dir, 'status', runId, ...(json ? ['--json'] : [])], (out) => {
      if (json) assert(JSON.parse(out).steps.length === count, `status --json ${runId}`);
      else assert(out.includes(`${count}/${count} steps done`), `status ${runId}: ${out.slice(0, 200)}`);
    });
  // Floors of the same commands: a bare node process that opens the database with better-sqlite3
  // and reads what the command cannot do without. The view of a finished 10k run: its counts per
  // status (it lists no step of it). --json: every step's state columns in plan order (as arrays,
  // the cheapest rows) and the plan snapshot's text, without parsing or printing them.
  const floor = (body) =>
    `const db = new (require('better-sqlite3'))(${JSON.stringify(home.dbPath)}, { readonly: true });\n${body}`;
  const countsFloor =
    floor(`const counts = db.prepare('SELECT status, count(*) AS n FROM steps WHERE run_id = ? GROUP BY status').all('big');
if (counts.reduce((sum, row) => sum + row.n, 0) !== ${steps}) process.exit(1);`);
  const jsonFloor =
    floor(`const rows = db.prepare(\`SELECT ${STATE_COLUMNS} FROM steps WHERE run_id = ? ORDER BY position\`).raw().all('big');
const plan = db.prepare('SELECT plan_json FROM run_plans WHERE run_id = ?').pluck().get('big');
if (rows.length !== ${steps} || plan.length === 0) process.exit(1);`);
  emit({
    steps,
    wStepsPerSec: w,
    bigStepsPerSec: big.stepsPerSec,
    bigVsW: big.stepsPerSec / w,
    bigCreateMs: big.createMs,
    settledStepsPerSec: settled.stepsPerSec,
    settledVsW: settled.stepsPerSec / w,
    statusMs: status('big', false, steps),
    statusJsonMs: status('big', true, steps),
    status100Ms: status('small', false, 100),
    statusJson100Ms: status('small', true, 100),
    statusFloorMs: timeCommand(['-e', countsFloor], () => {}),
    statusJsonFloorMs: timeCommand(['-e', jsonFloor], () => {}),
  });
} finally {
  // BENCH_KEEP_HOME=1 leaves the database for profiling `baton status` (its path on stderr).
  if (process.env.BENCH_KEEP_HOME) process.stderr.write(`kept ${home.dir}\n`);
  else home.dispose();
}
