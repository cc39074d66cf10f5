// Issue 20's plan-size goals: a valid 10,000-step plan validated and stored in <= 1 s more than a
// 100-step plan, and a 10,000-step plan with a bad dependency or a cycle refused in <= 1 s, each
// in <= 200 MB, through both entry points, each a fresh child process preloaded with
// bench/max-rss.cjs (its own peak RSS and CPU time, user + system):
// - the CLI: `baton run <plan.json> --detach` (dist/cli/baton.cjs) of plans of agent steps in the
//   shape of hostile-plans.mjs (hubs whose workers read {{steps.<hub>.summary}}), 100 and 10,000
//   steps, then the bad-dependency and cycle plans; wall and CPU time of the whole process;
// - the TypeScript API: bench/big-plan-api.mjs defines a workflow of fn steps of the same shape
//   with defineWorkflow().step(...) and calls baton.start (Workflow.toPlan -> validatePlanObject ->
//   startRun); its figure is the time from the first `step` call to `start` resolving or throwing
//   PLAN_INVALID, beside the peak RSS and CPU time of the whole process.
// Beside them the floor of any command reading the 10,000-step plan file: `node -e` reading it and
// JSON.parse-ing it (as hostile-plans.mjs). Each figure is the median of MEASURES alternating measurements (after one warm-up of each).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BAD_DEP_STEP, blockSteps, cycleSteps } from '../big-plan-shapes.mjs';
import { assert, emit, median, now } from '../lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', '..', 'dist', 'cli', 'baton.cjs');
const API = join(here, '..', 'big-plan-api.mjs');
const MAX_RSS = join(here, '..', 'max-rss.cjs');
const AGENT = [process.execPath, join(here, '..', '..', 'test', 'fixtures', 'agent-succeed.mjs')];
const MEASURES = Number(process.env.BENCH_BIG_MEASURES ?? 3);

function agentPlan(name, steps) {
  return { name, defaults: { agent: { command: AGENT } }, limits: { maxSteps: 100_000 }, steps };
}

/** An agent step; workers and merges read their hub's summary (the merge: an indirect dependency). */
function agentStep(id, dependsOn) {
  const hub = id.startsWith('w-') || id.startsWith('merge-') ? `hub-${id.split('-')[1]}` : null;
  return {
    id,
    instruction: hub === null ? `plan ${id}` : `work on {{steps.${hub}.summary}}`,
    ...(dependsOn.length > 0 ? { dependsOn } : {}),
  };
}

function writePlans(dir) {
  const bad = blockSteps(100, agentStep);
  bad[BAD_DEP_STEP].dependsOn = ['nope'];
  const plans = {
    cli100: agentPlan('big', blockSteps(1, agentStep)),
    cli10k: agentPlan('big', blockSteps(100, agentStep)),
    cliBadDep: agentPlan('big', bad),
    cliCycle: agentPlan(
      'cycle',
      cycleSteps(10_000, (id, dependsOn) => ({ id, instruction: 'x', dependsOn })),
    ),
  };
  for (const [key, plan] of Object.entries(plans))
    writeFileSync(join(dir, `${key}.json`), JSON.stringify(plan));
  return Object.keys(plans);
}

const EXPECT = {
  floor10k: { code: 0 },
  cli100: { code: 0 },
  cli10k: { code: 0 },
  cliBadDep: { code: 2, message: 'steps.hub-50.dependsOn[0]: unknown step "nope"' },
  cliCycle: { code: 2, message: 'cycle of 10000 steps' },
  api100: { code: 0 },
  api10k: { code: 0 },
  apiBadDep: { code: 2, message: 'steps.hub-50.dependsOn[0]: unknown step "nope"' },
  apiCycle: { code: 2, message: 'cycle of 10000 steps' },
};

/** One child: wall ms (or the API's own figure), CPU ms and peak RSS MB; its outcome checked. */
function measure(key, dir, round) {
  const home = join(dir, `home-${key}-${round}`);
  const api = {
    api100: ['valid', 100],
    api10k: ['valid', 10_000],
    apiBadDep: ['bad-dep', 10_000],
    apiCycle: ['cycle', 10_000],
  }[key];
  const floorOf = key === 'floor10k' ? "JSON.parse(require('fs').readFileSync('cli10k.json', 'utf8'))" : null;
  const args = api
    ? [API, api[0], String(api[1]), home]
    : floorOf
      ? ['-e', floorOf]
      : [CLI, '--home', home, 'run', `${key}.json`, '--detach'];
  // The fixture agent is the operator's own program: trusted as an operator would trust it.
  const env = { ...process.env, BATON_TRUSTED_AGENTS: AGENT[1] };
  const start = now();
  const child = spawnSync(process.execPath, ['-r', MAX_RSS, ...args], { cwd: dir, encoding: 'utf8', env });
  const wallMs = now() - start;
  rmSync(home, { recursive: true, force: true });
  const expected = EXPECT[key];
  assert(
    child.status === expected.code,
    `${key}: exit ${child.status}, expected ${expected.code}: ${child.stderr}`,
  );
  if (expected.message) assert(child.stderr.includes(expected.message), `${key}: ${child.stderr}`);
  const rss = /BENCH_MAX_RSS_KB (\d+)/.exec(child.stderr)?.[1];
  const cpu = /BENCH_CPU_US (\d+)/.exec(child.stderr)?.[1];
  const apiMs = /BENCH_API_MS ([\d.]+)/.exec(child.stdout)?.[1];
  assert(rss !== undefined && cpu !== undefined, `${key}: no figures: ${child.stderr}`);
  assert(!api || apiMs !== undefined, `${key}: no BENCH_API_MS: ${child.stdout}`);
  return { ms: api ? Number(apiMs) : wallMs, cpuMs: Number(cpu) / 1000, rssMb: Number(rss) / 1024 };
}

const dir = mkdtempSync(join(tmpdir(), 'baton-bench-big-plans-'));
try {
  const keys = ['floor10k', ...writePlans(dir), 'api100', 'api10k', 'apiBadDep', 'apiCycle'];
  const samples = Object.fromEntries(keys.map((key) => [key, []]));
  for (let round = 0; round <= MEASURES; round++) {
    for (const key of keys) {
      const sample = measure(key, dir, round);
      if (round > 0) samples[key].push(sample);
    }
  }
  const result = {};
  for (const key of keys) {
    for (const figure of ['ms', 'cpuMs', 'rssMb']) {
      const name = `${key}${figure === 'ms' ? 'Ms' : figure === 'cpuMs' ? 'CpuMs' : 'RssMb'}`;
      result[name] = median(samples[key].map((s) => s[figure]));
    }
  }
  for (const via of ['cli', 'api']) {
    result[`${via}ExtraMs`] = result[`${via}10kMs`] - result[`${via}100Ms`];
    result[`${via}ExtraCpuMs`] = result[`${via}10kCpuMs`] - result[`${via}100CpuMs`];
  }
  emit(result);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
