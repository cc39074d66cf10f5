/**
 * `timeoutMs` holds for every kind of step, decided in one place (engine/attempt-deadline.ts): a
 * function step gets `ctx.signal` at its timeout and the attempt ends timed out whether or not the
 * function listens; a timeout is retried like any transient failure, and an unsafe step that timed
 * out (function or agent) is blocked as an unknown outcome. Real SQLite files, a real agent process.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Baton, RunNotSucceededError } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import {
  attempts,
  expectExit,
  isAlive,
  removeTempDirs,
  runBaton,
  runStatus,
  stopProcesses,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir, stepOf } from './helpers/plans.js';

const homes: string[] = [];
const open = () => {
  const home = mkdtempSync(join(tmpdir(), 'baton-timeout-'));
  homes.push(home);
  return Baton.open({ home, pollMs: 20 });
};
afterEach(async () => {
  await stopProcesses();
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});
afterAll(() => removeTempDirs());

/** A promise the test settles by hand: a function "ignoring its signal" waits on it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('timeoutMs of function steps', { timeout: 20_000 }, () => {
  it('ends an attempt that ignores its signal as timed out; its late result and effect are discarded', async () => {
    const stuck = gate();
    const returned = gate();
    const sent: string[] = [];
    let lookedLate: { aborted: boolean; reason: string } | null = null;
    const wf = defineWorkflow({ name: 'stuck' }).step(
      'wait',
      { timeoutMs: 200, retry: { maxAttempts: 1 } },
      async (ctx) => {
        try {
          await stuck.opened; // never looks at ctx.signal before its deadline
          // A signal first looked at after it fired (made on demand) says so.
          lookedLate = { aborted: ctx.signal.aborted, reason: (ctx.signal.reason as Error)?.name };
          await ctx.effect('send', () => {
            sent.push('late');
            return 1;
          });
          return 'late result';
        } finally {
          returned.open();
        }
      },
    );
    const baton = open();
    try {
      const error = await baton.run(wf, {}, { runId: 't1' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RunNotSucceededError);
      expect(error).toMatchObject({ status: 'blocked' });
      const [attempt, ...more] = await baton.store.getAttempts('t1', 'wait');
      expect(more).toEqual([]);
      expect(attempt).toMatchObject({ outcome: 'failed', failureClass: 'transient' });
      expect(attempt?.message).toMatch(/^timed out after 200 ms; it did not stop when its signal fired/);

      // The abandoned function goes on and returns: nothing of it reaches the run.
      stuck.open();
      await returned.opened;
      await new Promise((resolve) => setImmediate(resolve));
      expect(lookedLate).toEqual({ aborted: true, reason: 'TimeoutError' });
      expect(sent).toEqual([]);
      const run = await baton.store.getRun('t1');
      expect(run?.steps[0]).toMatchObject({ status: 'blocked', lastFailureClass: 'transient' });
      expect(await baton.store.getStepResults('t1', ['wait'])).toEqual({});
      expect(await baton.store.getAttempts('t1', 'wait')).toHaveLength(1);
    } finally {
      stuck.open();
      await baton.close();
    }
  });

  it('aborts ctx.signal at the timeout (a TimeoutError) and retries the step like any timeout', async () => {
    const reasons: string[] = [];
    const wf = defineWorkflow({ name: 'listens' }).step(
      'fetch',
      { timeoutMs: 200, retry: { maxAttempts: 2, initialDelayMs: 0, maxDelayMs: 0 } },
      async (ctx) => {
        if (ctx.attempt > 1) return 'second try';
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        reasons.push((ctx.signal.reason as Error).name);
        throw ctx.signal.reason;
      },
    );
    const baton = open();
    try {
      expect(await baton.run(wf, {}, { runId: 't2' })).toEqual({ fetch: 'second try' });
      expect(reasons).toEqual(['TimeoutError']);
      const tries = await baton.store.getAttempts('t2', 'fetch');
      expect(tries.map((a) => [a.outcome, a.failureClass])).toEqual([
        ['failed', 'transient'],
        ['succeeded', null],
      ]);
      expect(tries[0]?.message).toBe('timed out after 200 ms; it was stopped through its signal');
    } finally {
      await baton.close();
    }
  });

  it('blocks an unsafe step that timed out as an unknown outcome, never retried', async () => {
    let calls = 0;
    const wf = defineWorkflow({ name: 'unsafe' }).step(
      'pay',
      { timeoutMs: 200, sideEffect: 'unsafe', retry: { maxAttempts: 3, initialDelayMs: 0 } },
      async (ctx) => {
        calls++;
        ctx.log('calling the payment API');
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        await new Promise((resolve) => setTimeout(resolve, 5_000)); // ignores it
      },
    );
    const baton = open();
    try {
      const error = await baton.run(wf, {}, { runId: 't3' }).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 'blocked' });
      expect(calls).toBe(1);
      const run = await baton.store.getRun('t3');
      expect(run?.steps[0]).toMatchObject({ status: 'blocked', lastFailureClass: 'unknown_outcome' });
      const [attempt] = await baton.store.getAttempts('t3', 'pay');
      expect(attempt?.message).toContain('unsafe side effect, so whether it happened is unknown');
      expect(attempt?.message).toContain('baton resolve t3 pay --result <json>');
      // What the abandoned function logged stays readable (`baton logs`).
      expect(readFileSync(join(baton.home, attempt!.logPath!), 'utf8')).toContain('calling the payment API');
    } finally {
      await baton.close();
    }
  });
});

describe('timeoutMs of agent steps', () => {
  it('stops every process of an unsafe agent step at its timeout and blocks it as an unknown outcome', async () => {
    const { dir, home } = planDir('baton-timeout-agent-');
    const pidFile = join(dir, 'grandchild.pid');
    const file = writePlan(
      dir,
      // Long enough for the agent to start its grandchild on a loaded machine (node and a child
      // node took up to 3.3 s at a load of 25 on 2 cores).
      fixturePlan(
        [{ id: 'send', instruction: 'hang', sideEffect: 'unsafe', timeoutMs: 10_000 }],
        {},
        'agent-hang',
      ),
    );
    const result = await runBaton(['run', file, '--id', 'a1'], {
      home,
      env: { HANG_CHILD_PIDFILE: pidFile },
    });
    expectExit(result, 1);
    expect(stepOf(await runStatus(home, 'a1'), 'send')).toMatchObject({
      status: 'blocked',
      lastFailureClass: 'unknown_outcome',
    });
    const tries = await attempts(home, 'a1', 'send');
    expect(tries).toHaveLength(1);
    expect(tries[0]?.message).toMatch(
      /^timed out after 10000 ms; every process of the attempt was stopped; the step has an unsafe side effect/,
    );
    // The agent's grandchild went with it.
    expect(existsSync(pidFile)).toBe(true);
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => !isAlive(grandchild), 10_000, 'the grandchild to be gone');
  });
});
