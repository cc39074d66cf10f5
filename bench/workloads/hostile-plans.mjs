// Hostile and huge plans through the real `baton` command (dist/cli/baton.cjs), each run as a
// child process whose own peak RSS is reported (bench/max-rss.cjs, preloaded with -r, prints
// process.resourceUsage().maxRSS as the process exits):
// - valid: 10,000 steps in 100 blocks of a hub, 98 workers that depend on it (their instruction
//   reads {{steps.<hub>.summary}}) and a merge that depends on the 98 (and reads the hub's
//   summary: an indirect dependency); `baton run --detach` accepts it and stores the run;
// - bad-dep: the same with one unknown dependsOn, refused;
// - cycle: 10,000 steps, each depending on the one before and the first on the last, refused;
// - deep-json / deep-yaml: a plan whose `args` nests 100,000 arrays, refused.
// Beside each, the floor of any command that reads the file: `node -e` reading and JSON.parse-ing
// the same file (for the YAML file, reading it), peak RSS included. Wall time is the goal's
// measure; CPU time (user + system of the child) is printed too, as load from other processes
// stretches wall time far more.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert, emit, now } from '../lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', '..', 'dist', 'cli', 'baton.cjs');
const MAX_RSS = join(here, '..', 'max-rss.cjs');
const AGENT = [process.execPath, join(here, '..', '..', 'test', 'fixtures', 'agent-succeed.mjs')];
const DEPTH = 100_000;

function blocks(count) {
  const steps = [];
  for (let b = 0; b < count; b++) {
    const hub = `hub-${b}`;
    steps.push({
      id: hub,
      instruction: `plan block ${b}`,
      ...(b > 0 ? { dependsOn: [`merge-${b - 1}`] } : {}),
    });
    const workers = Array.from({ length: 98 }, (_, w) => `w-${b}-${w}`);
    for (const id of workers) {
      steps.push({ id, instruction: `work on {{steps.${hub}.summary}}`, dependsOn: [hub] });
    }
    steps.push({
      id: `merge-${b}`,
      instruction: `merge, after {{steps.${hub}.summary}}`,
      dependsOn: workers,
    });
  }
  return steps;
}

function writeFiles(dir) {
  const valid = {
    name: 'big',
    defaults: { agent: { command: AGENT } },
    limits: { maxSteps: 100_000 },
    steps: blocks(100),
  };
  const bad = structuredClone(valid);
  bad.steps[5_000].dependsOn = ['nope'];
  const cycle = {
    name: 'cycle',
    defaults: { agent: { command: AGENT } },
    steps: Array.from({ length: 10_000 }, (_, i) => ({
      id: `s${i}`,
      instruction: 'x',
      dependsOn: [`s${(i + 9_999) % 10_000}`],
    })),
  };
  const nested = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
  const files = {
    valid: ['valid.json', JSON.stringify(valid)],
    badDep: ['bad-dep.json', JSON.stringify(bad)],
    cycle: ['cycle.json', JSON.stringify(cycle)],
    deepJson: ['deep.json', `{"name":"deep","steps":[{"id":"a","fn":"f","args":${nested}}]}`],
    deepYaml: ['deep.yaml', `name: deep\nsteps:\n  - id: a\n    fn: f\n    args: ${nested}\n`],
  };
  for (const [name, text] of Object.values(files)) writeFileSync(join(dir, name), text);
  return files;
}

/** Runs node with the max-RSS preload; returns wall and CPU ms, peak RSS in MB, exit code, stderr. */
function measure(args, cwd) {
  const start = now();
  // The fixture agent is the operator's own program: trusted as an operator would trust it.
  const env = { ...process.env, BATON_TRUSTED_AGENTS: AGENT[1] };
  const child = spawnSync(process.execPath, ['-r', MAX_RSS, ...args], { cwd, encoding: 'utf8', env });
  const ms = now() - start;
  const rss = /BENCH_MAX_RSS_KB (\d+)/.exec(child.stderr ?? '')?.[1];
  const cpu = /BENCH_CPU_US (\d+)/.exec(child.stderr ?? '')?.[1];
  assert(rss !== undefined && cpu !== undefined, `no figures from ${args.join(' ')}: ${child.stderr}`);
  return {
    ms,
    cpuMs: Number(cpu) / 1000,
    rssMb: Number(rss) / 1024,
    code: child.status,
    stderr: child.stderr,
  };
}

const EXPECT = {
  valid: { code: 0 },
  badDep: { code: 2, message: 'steps.hub-50.dependsOn[0]: unknown step "nope"' },
  cycle: { code: 2, message: 'cycle of 10000 steps' },
  deepJson: { code: 2, message: 'nesting is deeper than 64 levels (the limit)' },
  deepYaml: { code: 2, message: 'nesting is deeper than 64 levels (the limit)' },
};

const dir = mkdtempSync(join(tmpdir(), 'baton-bench-hostile-'));
try {
  const files = writeFiles(dir);
  const result = {};
  for (const [key, [name]] of Object.entries(files)) {
    // A fresh home each time: the valid plan is stored.
    const home = join(dir, `home-${key}`);
    const run = measure([CLI, '--home', home, 'run', name, '--detach'], dir);
    const expected = EXPECT[key];
    assert(run.code === expected.code, `${name}: exit ${run.code}, expected ${expected.code}: ${run.stderr}`);
    if (expected.message) assert(run.stderr.includes(expected.message), `${name}: ${run.stderr}`);
    rmSync(home, { recursive: true, force: true });
    const parse = name.endsWith('.json') ? 'JSON.parse(text)' : 'text.length';
    const floor = measure(
      ['-e', `const text = require('fs').readFileSync(${JSON.stringify(name)}, 'utf8'); ${parse};`],
      dir,
    );
    assert(floor.code === 0, `floor of ${name} failed: ${floor.stderr}`);
    Object.assign(result, {
      [`${key}Ms`]: run.ms,
      [`${key}CpuMs`]: run.cpuMs,
      [`${key}RssMb`]: run.rssMb,
      [`${key}FloorMs`]: floor.ms,
      [`${key}FloorCpuMs`]: floor.cpuMs,
      [`${key}FloorRssMb`]: floor.rssMb,
    });
  }
  emit(result);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
