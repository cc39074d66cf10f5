/**
 * `baton run` stopped and started again, as real processes with real signals: SIGKILLed mid-step,
 * `baton run <plan> --id r` resumes its own run (earlier steps are not run again) and refuses a
 * different plan or inputs; SIGINT/SIGTERM end it with 130/143 and a line saying how to continue,
 * leaving the running agent to its lease or (with --stop-agents) stopping it before exiting.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  agentCommand,
  attempts,
  countByStep,
  expectExit,
  expectRefused,
  isAlive,
  readCounts,
  removeTempDirs,
  runBaton,
  runStatus,
  spawnBaton,
  stopAgentsAfterEach,
  tempDir,
  waitFor,
  writePlan,
} from './helpers/cli.js';

const countFiles = stopAgentsAfterEach();

afterAll(() => removeTempDirs());

/** A chain prep -> long of counting agents; `long` sleeps SLEEP_MS (the rest do not). */
function setup(extra: Record<string, unknown> = {}) {
  const dir = tempDir('baton-run-stop-');
  const countFile = join(dir, 'counts');
  countFiles.push(countFile);
  const plan = {
    name: 'stop-test',
    inputs: { topic: { default: 'x' } },
    defaults: { agent: { command: agentCommand('agent-count') }, retry: { initialDelayMs: 10 } },
    steps: [
      { id: 'prep', instruction: 'prep {{inputs.topic}}' },
      { id: 'long', instruction: 'long', dependsOn: ['prep'] },
    ],
    ...extra,
  };
  const file = writePlan(dir, plan);
  const home = join(dir, 'home');
  const env = (sleepMs: number) => ({ COUNT_FILE: countFile, SLEEP_MS: String(sleepMs), SLEEP_STEP: 'long' });
  // A short lease: an attempt whose process is gone is reclaimed a second after its last renewal.
  const start = (args: string[] = [], sleepMs = 120_000) =>
    spawnBaton(['run', file, '--id', 'r', '--lease', '1s', ...args], { home, env: env(sleepMs) });
  const longStarted = () =>
    waitFor(() => readCounts(countFile).find((l) => l.step === 'long'), 30_000, 'long');
  return { dir, file, plan, home, countFile, env, start, longStarted };
}

describe('baton run --id of an existing run', () => {
  it('after a SIGKILL mid-step resumes its own run: the killed step runs again, finished ones do not', async () => {
    const s = setup();
    const first = s.start();
    await s.longStarted();
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const again = expectExit(
      await runBaton(['run', s.file, '--id', 'r', '--lease', '1s'], { home: s.home, env: s.env(0) }),
      0,
    );
    expect(again.stderr).toMatch(
      /^baton run: resuming run r \(started \d{4}-\d\d-\d\dT[^,]+, 1\/2 steps done\)$/m,
    );
    expect(again.stdout).toMatch(/^run r succeeded \(2\/2 steps done/m);
    expect(Object.fromEntries(countByStep(readCounts(s.countFile)))).toEqual({ 'r prep': 1, 'r long': 2 });
    expect((await attempts(s.home, 'r', 'long')).map((a) => a.outcome)).toEqual(['interrupted', 'succeeded']);

    // A run that has ended is only reported, with the exit code it ended with.
    const done = expectExit(await runBaton(['run', s.file, '--id', 'r'], { home: s.home, env: s.env(0) }), 0);
    expect(done.stderr).toMatch(/run r already succeeded/);
    expect(readCounts(s.countFile)).toHaveLength(3);

    // Another plan or other inputs under the same id: refused, naming what differs; nothing runs.
    const other = writePlan(
      s.dir,
      { ...s.plan, steps: [{ id: 'prep', instruction: 'other' }] },
      { name: 'o.yaml' },
    );
    expectRefused(
      await runBaton(['run', other, '--id', 'r'], { home: s.home, env: s.env(0) }),
      'a run with id "r" already exists and is not this run: its plan differs from this one (plan hash',
    );
    const renamed = writePlan(s.dir, { ...s.plan, name: 'renamed' }, { name: 'n.yaml' });
    expectRefused(
      await runBaton(['run', renamed, '--id', 'r'], { home: s.home, env: s.env(0) }),
      'its plan is named "stop-test", this one "renamed"',
    );
    expectRefused(
      await runBaton(['run', s.file, '--id', 'r', '-i', 'topic=y'], { home: s.home, env: s.env(0) }),
      'its inputs differ (topic)',
    );
    expect(readCounts(s.countFile)).toHaveLength(3);
  }, 60_000);
});

describe('SIGINT / SIGTERM on baton run', () => {
  it('SIGINT: exits 130 saying how to continue; the agent is left to its lease; baton run --id r finishes', async () => {
    const s = setup();
    const run = s.start();
    const agent = await s.longStarted();
    run.child.kill('SIGINT');
    const exit = await run.exited;
    expect(exit.code, run.stderr()).toBe(130);
    expect(run.stderr()).toMatch(
      /baton run: SIGINT: run r stopped \(1\/2 steps done; long left to its lease .*\); continue with: baton run \S+plan\.yaml --id r/,
    );
    // Left to its lease: the agent was not stopped, and the step is still leased.
    expect(isAlive(agent.pid)).toBe(true);
    expect((await runStatus(s.home, 'r')).steps[1]?.status).toBe('running');

    const again = expectExit(
      await runBaton(['run', s.file, '--id', 'r', '--lease', '1s'], { home: s.home, env: s.env(0) }),
      0,
    );
    expect(again.stdout).toMatch(/^run r succeeded/m);
    // Whoever reclaimed the lease stopped the agent left behind.
    expect(isAlive(agent.pid)).toBe(false);
    expect(Object.fromEntries(countByStep(readCounts(s.countFile)))).toEqual({ 'r prep': 1, 'r long': 2 });
  }, 60_000);

  it('SIGTERM with --stop-agents: the agent is gone before it exits 143; baton worker finishes the run', async () => {
    const s = setup();
    const run = s.start(['--stop-agents']);
    const agent = await s.longStarted();
    run.child.kill('SIGTERM');
    const exit = await run.exited;
    expect(isAlive(agent.pid), 'the agent outlived baton run').toBe(false);
    expect(exit.code, run.stderr()).toBe(143);
    expect(run.stderr()).toMatch(
      /SIGTERM: run r stopped \(1\/2 steps done; running agents stopped\); continue with:/,
    );
    const status = await runStatus(s.home, 'r');
    expect(status.status).toBe('running');
    expect(status.steps[1]).toMatchObject({ lastFailureClass: 'interrupted', tries: 0 });

    const worker = spawnBaton(['worker'], { home: s.home, env: s.env(0) });
    await waitFor(async () => (await runStatus(s.home, 'r')).status === 'succeeded', 30_000, 'the run', 200);
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    expect(Object.fromEntries(countByStep(readCounts(s.countFile)))).toEqual({ 'r prep': 1, 'r long': 2 });
  }, 60_000);
});
