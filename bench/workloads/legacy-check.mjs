// `baton check <state.json>` (the agent-step-sequencer drop-in) on a fresh 50-step state file with
// STEP_AGENT_CMD=true: one process drives all 50 steps (two atomic state writes and one spawn of
// `true` per step). Also times `baton check` on the same file already DONE (process start, imports,
// reading the file) and reports per step both the raw figure and the one without that fixed cost.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert, emit, median, now, tempHome } from '../lib.mjs';

const STEPS = 50;
const INVOCATIONS = Number(process.env.BENCH_LEGACY_INVOCATIONS ?? 3);
const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'cli', 'main.js');
const ENV = { ...process.env, STEP_AGENT_CMD: 'true', STEP_MAX_RETRIES: '3' };
/** Where `true` is on PATH: the floor runs it without searching, as Baton does once it checked it. */
const TRUE_PATH = (process.env.PATH ?? '')
  .split(':')
  .map((dir) => join(dir || '.', 'true'))
  .find((file) => existsSync(file));
assert(TRUE_PATH !== undefined, '`true` is not on PATH');

function stateOf(status) {
  const ids = Array.from({ length: STEPS }, (_, i) => `step-${i + 1}`);
  const done = status === 'DONE';
  return {
    plan: { steps: Object.fromEntries(ids.map((id) => [id, { title: id, instruction: `do ${id}` }])) },
    stepQueue: ids,
    currentStep: done ? STEPS : 0,
    stepRuns: done
      ? Object.fromEntries(
          ids.map((id) => [id, { status: 'DONE', tries: 1, lastRunIso: '2025-01-01T00:00:00Z' }]),
        )
      : {},
    stepDelayMinutes: 0,
    blockers: [],
    artifacts: [],
    status,
  };
}

/**
 * The least a state.json step can cost here, measured in a fresh Node process: per step, one
 * atomic write of a 50-step state (temporary file, fsync, rename, fsync of the folder) and one
 * spawn of `true`, by its absolute path (no PATH search), with its output piped, waited for.
 * Nothing else: no log, no validation.
 */
const FLOOR_SCRIPT = `
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const dir = process.argv[1];
const program = process.argv[2];
const text = fs.readFileSync(dir + '/floor-state.json', 'utf8');
(async () => {
  const dirFd = fs.openSync(dir, 'r');
  const start = performance.now();
  for (let i = 0; i < ${STEPS}; i++) {
    const fd = fs.openSync(dir + '/.floor.tmp', 'w', 0o600);
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(dir + '/.floor.tmp', dir + '/floor-state.json');
    fs.fsyncSync(dirFd);
    await new Promise((resolve, reject) => {
      const child = spawn(program, ['do step'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      child.stdout.resume();
      child.stderr.resume();
      child.once('error', reject);
      child.once('close', resolve);
    });
  }
  process.stdout.write(String((performance.now() - start) / ${STEPS}));
})();`;

function stepFloorMs(dir) {
  writeFileSync(join(dir, 'floor-state.json'), `${JSON.stringify(stateOf('IN_PROGRESS'), null, 2)}\n`);
  const result = spawnSync(process.execPath, ['-e', FLOOR_SCRIPT, dir, TRUE_PATH], { encoding: 'utf8' });
  assert(result.status === 0, `floor script failed: ${result.stderr}`);
  return Number(result.stdout);
}

function timeCheck(path) {
  const start = now();
  const result = spawnSync(process.execPath, [CLI, 'check', path], { encoding: 'utf8', env: ENV });
  const ms = now() - start;
  assert(
    result.status === 0,
    `baton check ${path} exited ${result.status}: ${result.stdout}${result.stderr}`,
  );
  return ms;
}

const home = tempHome('legacy-check');
try {
  const donePath = join(home.dir, 'done.json');
  writeFileSync(donePath, `${JSON.stringify(stateOf('DONE'), null, 2)}\n`);
  const doneText = readFileSync(donePath, 'utf8');

  /** A fresh 50-step state in its own file; the check must leave every step DONE. */
  const runOnce = (label) => {
    const path = join(home.dir, `state-${label}.json`);
    writeFileSync(path, `${JSON.stringify(stateOf('IN_PROGRESS'), null, 2)}\n`);
    const ms = timeCheck(path);
    const state = JSON.parse(readFileSync(path, 'utf8'));
    const done = state.stepQueue.filter((id) => state.stepRuns[id]?.status === 'DONE').length;
    assert(done === STEPS && state.currentStep === STEPS, `${label}: ${done}/${STEPS} steps DONE`);
    return ms;
  };

  // One warm-up of each (file cache), then interleaved so machine noise hits both alike.
  runOnce('warmup');
  timeCheck(donePath);
  const checkMs = [];
  const doneMs = [];
  for (let i = 0; i < INVOCATIONS; i++) {
    checkMs.push(runOnce(String(i)));
    doneMs.push(timeCheck(donePath));
  }
  assert(readFileSync(donePath, 'utf8') === doneText, 'baton check changed a DONE state file');
  const check = median(checkMs);
  const done = median(doneMs);
  const floors = Array.from({ length: INVOCATIONS }, () => stepFloorMs(home.dir));
  emit({
    steps: STEPS,
    invocations: INVOCATIONS,
    checkMs: check,
    doneCheckMs: done,
    rawMsPerStep: check / STEPS,
    msPerStep: (check - done) / STEPS,
    floorMsPerStep: median(floors),
  });
} finally {
  home.dispose();
}
