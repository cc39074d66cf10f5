/**
 * The stall watchdog of agent steps (issue 40, item 1): an agent that prints nothing and changes
 * no file of its workspace for `agent.stallTimeoutMs` is stopped, every process of its attempt
 * with it, and the attempt ends transient (an unsafe step: unknown_outcome); at half the timeout a
 * `step.stalling` event says so. An agent that prints, or writes files, keeps going. Real `baton`
 * processes and real fixture agents; nothing here measures time.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { processesOfRun } from './helpers/agent-steps.js';
import {
  agentCommand,
  attempts,
  removeTempDirs,
  runBaton,
  runStatus,
  spawnBaton,
  tempDir,
  timeline,
  waitFor,
  writePlan,
} from './helpers/cli.js';

afterAll(() => removeTempDirs());

/** Whether `pid` runs: a zombie (dead, its new parent not yet reaping it) does not. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function runStallPlan(steps: object[], env: Record<string, string>) {
  const dir = tempDir('baton-stall-');
  const home = join(dir, 'home');
  const file = writePlan(dir, {
    name: 'stall',
    defaults: {
      agent: { command: agentCommand('agent-stall'), stallTimeoutMs: '2s' },
      timeoutMs: '10m',
      retry: { maxAttempts: 1 },
    },
    limits: { concurrency: 4 },
    steps,
  });
  const result = await runBaton(['run', file, '--json'], { home, env, timeoutMs: 240_000 });
  const run = await runStatus(home, (JSON.parse(result.stdout) as { id: string }).id);
  return { dir, home, run, result };
}

describe('agent.stallTimeoutMs', () => {
  it('stops an agent that printed one line and then nothing, with every process of its attempt; transient, with the reason; step.stalling came first', async () => {
    const pidFile = join(tempDir('baton-stall-pid-'), 'child.pid');
    const { home, run } = await runStallPlan([{ id: 'quiet', instruction: 'wait for nothing' }], {
      STALL_MODE: 'quiet',
      STALL_CHILD_PIDFILE: pidFile,
    });
    const [attempt] = await attempts(home, run.id, 'quiet');
    expect(attempt?.failureClass).toBe('transient');
    expect(attempt?.message).toMatch(
      /^no output or workspace change for 2s \(agent\.stallTimeoutMs\); every process of the attempt was stopped/,
    );
    expect(run.steps.find((s) => s.stepId === 'quiet')?.status).toBe('blocked');
    const events = await timeline(home, run.id);
    const stalling = events.findIndex((e) => e.type === 'step.stalling');
    const failed = events.findIndex((e) => e.type === 'step.failed');
    expect(stalling).toBeGreaterThanOrEqual(0);
    expect(stalling).toBeLessThan(failed);
    expect(events[stalling]).toMatchObject({ stepId: 'quiet', attempt: 1, stallTimeoutMs: 2000 });
    // Nothing of the attempt is left: the agent's own child included.
    expect(processesOfRun(run.id)).toEqual([]);
    expect(existsSync(pidFile)).toBe(true);
    expect(alive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
  }, 240_000);

  it('a line repeated over and over is no sign of life; an unsafe step that stalls goes to a person as unknown_outcome', async () => {
    const { home, run } = await runStallPlan(
      [{ id: 'notices', instruction: 'retry forever', sideEffect: 'unsafe' }],
      { STALL_MODE: 'repeat' },
    );
    const [attempt] = await attempts(home, run.id, 'notices');
    expect(attempt?.failureClass).toBe('unknown_outcome');
    expect(attempt?.message).toMatch(
      /^no output or workspace change for 2s .*the step has an unsafe side effect/,
    );
    expect(processesOfRun(run.id)).toEqual([]);
  }, 240_000);

  it('an agent that prints, or that writes files without printing, for longer than its stall timeout is not stopped', async () => {
    const dir = tempDir('baton-stall-busy-');
    const home = join(dir, 'home');
    const file = writePlan(dir, {
      name: 'busy',
      defaults: {
        // Progress every second, four times inside the timeout: room for a loaded machine.
        agent: { command: agentCommand('agent-stall'), stallTimeoutMs: '4s' },
        retry: { maxAttempts: 1 },
      },
      limits: { concurrency: 2 },
      steps: [
        {
          id: 'printing',
          instruction: 'print',
          agent: {
            command: agentCommand('agent-stall'),
            stallTimeoutMs: '4s',
            env: { set: { STALL_MODE: 'print' } },
          },
        },
        {
          id: 'writing',
          instruction: 'write',
          agent: {
            command: agentCommand('agent-stall'),
            stallTimeoutMs: '4s',
            env: { set: { STALL_MODE: 'write' } },
          },
        },
      ],
    });
    const result = await runBaton(['run', file, '--json'], { home, timeoutMs: 240_000 });
    expect(result.code, result.stderr).toBe(0);
    const run = await runStatus(home, (JSON.parse(result.stdout) as { id: string }).id);
    expect(run.steps.map((s) => [s.stepId, s.status])).toEqual([
      ['printing', 'succeeded'],
      ['writing', 'succeeded'],
    ]);
    expect((await timeline(home, run.id)).filter((e) => e.type === 'step.stalling')).toEqual([]);
  }, 240_000);

  it('a worker SIGKILLed while its agent is silent: that attempt is reclaimed as interrupted, not stalled; the next one stalls', async () => {
    const dir = tempDir('baton-stall-kill-');
    const home = join(dir, 'home');
    const pidFile = join(dir, 'child.pid');
    const env = { STALL_MODE: 'quiet', STALL_CHILD_PIDFILE: pidFile };
    const file = writePlan(dir, {
      name: 'stall-kill',
      defaults: {
        agent: { command: agentCommand('agent-stall'), stallTimeoutMs: '3s' },
        retry: { maxAttempts: 1 },
      },
      steps: [{ id: 'quiet', instruction: 'wait for nothing' }],
    });
    // A run id of its own: processesOfRun looks at every process of the machine.
    const id = `stall-kill-${process.pid}-${Date.now()}`;
    expect((await runBaton(['run', file, '--id', id, '--detach'], { home })).code).toBe(0);
    // A short lease: the dead worker's attempt is reclaimed a second after it stopped renewing.
    const worker = spawnBaton(['worker', '--lease', '1s'], { home, env });
    await waitFor(() => existsSync(pidFile), 60_000, 'the agent to start');
    worker.child.kill('SIGKILL');
    expect((await worker.exited).signal).toBe('SIGKILL');
    await waitFor(
      async () => {
        await runBaton(['check', '--lease', '1s'], { home, env, timeoutMs: 120_000 });
        return (await runStatus(home, id)).status === 'blocked';
      },
      180_000,
      'the step to be reclaimed, run again and stall',
      200,
    );
    const tries = await attempts(home, id, 'quiet');
    expect(tries.map((t) => t.failureClass)).toEqual(['interrupted', 'transient']);
    expect(tries[1]?.message).toMatch(/^no output or workspace change for 3s/);
    expect(processesOfRun(id)).toEqual([]);
  }, 240_000);

  it('baton status says when each running agent step last printed something', async () => {
    const dir = tempDir('baton-stall-status-');
    const home = join(dir, 'home');
    const pidFile = join(dir, 'child.pid');
    const file = writePlan(dir, {
      name: 'last-output',
      defaults: { agent: { command: agentCommand('agent-stall'), stallTimeoutMs: '10m' } },
      steps: [{ id: 'quiet', instruction: 'wait for nothing' }],
    });
    const id = `stall-status-${process.pid}-${Date.now()}`;
    const run = spawnBaton(['run', file, '--id', id, '--stop-agents'], {
      home,
      env: { STALL_MODE: 'quiet', STALL_CHILD_PIDFILE: pidFile },
    });
    try {
      await waitFor(() => existsSync(pidFile), 60_000, 'the agent to start');
      // The agent printed its first line: the log has it.
      const status = await waitFor(
        async () => {
          const text = (await runBaton(['status', id], { home })).stdout;
          return /^quiet is running: last output \d+[smh] ago$/m.test(text) ? text : undefined;
        },
        60_000,
        'the last-output line',
      );
      expect(status).toMatch(/running/);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
    expect(processesOfRun(id)).toEqual([]);
  }, 240_000);

  it('0 is accepted (no watchdog); a value that is not a duration is refused naming the field (exit 2)', async () => {
    const dir = tempDir('baton-stall-bad-');
    const file = writePlan(dir, {
      name: 'bad',
      defaults: { agent: { command: agentCommand('agent-stall'), stallTimeoutMs: 'soon' } },
      steps: [{ id: 'a', instruction: 'x' }],
    });
    const result = await runBaton(['propose', file], { home: join(dir, 'home') });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/defaults\.agent\.stallTimeoutMs/);
    expect(result.stderr).toMatch(/"soon" is not a duration/);
    const off = writePlan(
      dir,
      {
        name: 'off',
        defaults: { agent: { command: agentCommand('agent-stall'), stallTimeoutMs: 0 } },
        steps: [{ id: 'a', instruction: 'x' }],
      },
      { name: 'off.yaml' },
    );
    expect((await runBaton(['propose', off], { home: join(dir, 'home') })).code).toBe(0);
  });
});
