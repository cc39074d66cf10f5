/**
 * `baton run` end to end, driving real fixture agents: success, templates, artifacts, retries with
 * the troubleshoot prompt, failure classes, budgets and timeouts.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  agentCommand,
  attempts,
  expectExit,
  readCounts,
  removeTempDirs,
  runBaton,
  runStatus,
  stopProcesses,
  timeline,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir, stepOf } from './helpers/plans.js';

const TEST_TIMEOUT = 60_000;

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

describe('baton run', () => {
  it(
    'runs a 3-step DAG to success; status, timeline and logs report it',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan([
          { id: 'a', instruction: 'do a' },
          { id: 'b', instruction: 'do b', dependsOn: ['a'] },
          { id: 'c', instruction: 'do c', dependsOn: ['a', 'b'] },
        ]),
      );
      const result = await runBaton(['run', file, '--id', 'dag'], { home });
      expect(result.stderr).toBe('');
      expectExit(result, 0);
      expect(result.stdout).toContain('run dag succeeded');

      const run = await runStatus(home, 'dag');
      expect(run.status).toBe('succeeded');
      expect(run.steps.map((s) => [s.stepId, s.status])).toEqual([
        ['a', 'succeeded'],
        ['b', 'succeeded'],
        ['c', 'succeeded'],
      ]);
      expect(run.workspace).toBe(dir);

      const events = await timeline(home, 'dag');
      for (const id of ['a', 'b', 'c']) {
        expect(events.filter((e) => e.type === 'step.started' && e.stepId === id)).toHaveLength(1);
        expect(events.filter((e) => e.type === 'step.succeeded' && e.stepId === id)).toHaveLength(1);
      }
      // Dependencies are honoured: a finished before b started, b before c.
      const seqOf = (type: string, id: string) => events.find((e) => e.type === type && e.stepId === id)!.seq;
      expect(seqOf('step.succeeded', 'a')).toBeLessThan(seqOf('step.started', 'b'));
      expect(seqOf('step.succeeded', 'b')).toBeLessThan(seqOf('step.started', 'c'));
      expect(events.at(-1)?.type).toBe('run.succeeded');

      const logs = await runBaton(['logs', 'dag', 'b'], { home });
      expectExit(logs, 0);
      expect(logs.stdout).toBe('ok: do b\n');
      const text = await runBaton(['timeline', 'dag'], { home });
      expectExit(text, 0);
      expect(text.stdout).toContain('succeeded: ok: do c');
    },
    TEST_TIMEOUT,
  );

  it(
    "passes {{steps.a.summary}} into step b's argv",
    async () => {
      const { dir, home } = planDir();
      const argvFile = join(dir, 'argv.json');
      const file = writePlan(
        dir,
        fixturePlan([
          { id: 'a', instruction: 'find the answer' },
          {
            id: 'b',
            dependsOn: ['a'],
            agent: { command: agentCommand('agent-echo-argv') },
            instruction: 'a said <{{steps.a.summary}}>',
          },
        ]),
      );
      const result = await runBaton(['run', file, '--id', 'tpl'], { home, env: { ARGV_FILE: argvFile } });
      expectExit(result, 0);
      expect(JSON.parse(readFileSync(argvFile, 'utf8'))).toEqual(['a said <ok: find the answer>']);
    },
    TEST_TIMEOUT,
  );

  it(
    'records required outputs as artifacts with path, size and sha256',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan(
          [{ id: 'write', instruction: 'write them', requiredOutputs: ['out/report.md', 'notes.txt'] }],
          {},
          'agent-write-outputs',
        ),
      );
      const result = await runBaton(['run', file, '--id', 'outs'], {
        home,
        env: { WRITE_OUTPUTS: 'out/report.md,notes.txt' },
      });
      expectExit(result, 0);
      expect((await runStatus(home, 'outs')).steps[0]?.status).toBe('succeeded');
      const [attempt] = await attempts(home, 'outs', 'write');
      const expected = ['out/report.md', 'notes.txt'].map((path) => {
        const bytes = readFileSync(join(dir, path));
        return { path, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
      });
      expect(attempt?.outcome).toBe('succeeded');
      expect(attempt?.outputs).toEqual(expected);
      expect(expected[0]!.size).toBeGreaterThan(0);
    },
    TEST_TIMEOUT,
  );

  it(
    'blocks a step whose required output is missing after maxAttempts, with a retry hint',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan([
          {
            id: 'draft',
            instruction: 'write the draft',
            requiredOutputs: ['draft.md'],
            retry: { maxAttempts: 2, initialDelayMs: 10 },
          },
        ]),
      );
      const result = await runBaton(['run', file, '--id', 'miss'], { home });
      expectExit(result, 1);
      expect(result.stdout).toContain('Missing required outputs: draft.md');

      const run = await runStatus(home, 'miss');
      expect(run.status).toBe('blocked');
      const step = stepOf(run, 'draft');
      expect(step.status).toBe('blocked');
      expect(step.attempt).toBe(2);
      expect(step.lastError).toBe('Missing required outputs: draft.md');
      expect(step.blockedReason).toContain('failed 2 of 2 allowed tries');

      const status = await runBaton(['status', 'miss'], { home });
      expectExit(status, 1);
      expect(status.stdout).toContain('baton retry miss draft');
      expect(status.stdout).toContain('Missing required outputs: draft.md');
    },
    TEST_TIMEOUT,
  );

  it(
    'retries a flaky agent with the troubleshoot prompt and succeeds on attempt 2',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan([{ id: 'flaky', instruction: 'fix the build' }], {}, 'agent-flaky'),
      );
      const result = await runBaton(['run', file, '--id', 'flk'], {
        home,
        env: { FLAKY_FAILS: '1', FLAKY_COUNTER: join(dir, 'flaky-count') },
      });
      expectExit(result, 0);
      const run = await runStatus(home, 'flk');
      expect(run.status).toBe('succeeded');
      expect(stepOf(run, 'flaky').attempt).toBe(2);

      const events = await timeline(home, 'flk');
      expect(events.filter((e) => e.type === 'step.started').map((e) => e.attempt)).toEqual([1, 2]);
      expect(events.filter((e) => e.type === 'step.retry_scheduled')).toHaveLength(1);

      const first = await runBaton(['logs', 'flk', 'flaky', '--attempt', '1'], { home });
      expect(first.stdout).toContain('flaky failure 1');
      // agent-flaky prints its last argument (the prompt) when it succeeds.
      const second = await runBaton(['logs', 'flk', 'flaky', '--attempt', '2'], { home });
      expectExit(second, 0);
      const prompt = second.stdout.replace(/^ok after 1 failures: /, '').trimEnd();
      expect(prompt.startsWith('Step flaky failed (tries: 1). Previous run ended with: ')).toBe(true);
      expect(prompt).toContain('flaky failure 1');
      expect(prompt.endsWith('Please troubleshoot and retry: fix the build')).toBe(true);
    },
    TEST_TIMEOUT,
  );

  it(
    'blocks a fatal failure (authentication) after one attempt, without retrying',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan(
          [{ id: 'call', instruction: 'call the api', retry: { maxAttempts: 5 } }],
          {},
          'agent-fail',
        ),
      );
      const result = await runBaton(['run', file, '--id', 'auth'], {
        home,
        env: { FAIL_MESSAGE: 'Error: authentication_failed' },
      });
      expectExit(result, 1);
      const run = await runStatus(home, 'auth');
      expect(run.status).toBe('blocked');
      const step = stepOf(run, 'call');
      expect(step.status).toBe('blocked');
      expect(step.attempt).toBe(1);
      expect(step.lastFailureClass).toBe('fatal');
      expect(step.blockedReason).toContain('not retried');
      const events = await timeline(home, 'auth');
      expect(events.filter((e) => e.type === 'step.started')).toHaveLength(1);
      expect(events.find((e) => e.type === 'step.blocked')?.failureClass).toBe('fatal');
    },
    TEST_TIMEOUT,
  );

  it(
    'blocks the same failure repeated 3 times as no progress, before maxAttempts 10',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan(
          [{ id: 'loop', instruction: 'try', retry: { maxAttempts: 10, initialDelayMs: 10 } }],
          {},
          'agent-fail',
        ),
      );
      const result = await runBaton(['run', file, '--id', 'nop'], { home });
      expectExit(result, 1);
      const run = await runStatus(home, 'nop');
      expect(run.status).toBe('blocked');
      const step = stepOf(run, 'loop');
      expect(step.attempt).toBe(3);
      expect(step.blockedReason).toContain('no progress');
      const events = await timeline(home, 'nop');
      expect(events.find((e) => e.type === 'step.blocked')?.failureClass).toBe('no_progress');
    },
    TEST_TIMEOUT,
  );

  it(
    'stops a run at limits.maxSteps with a budget reason',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan(
          [
            { id: 'one', instruction: '1' },
            { id: 'two', instruction: '2', dependsOn: ['one'] },
            { id: 'three', instruction: '3', dependsOn: ['two'] },
          ],
          { limits: { maxSteps: 2 } },
          'agent-count',
        ),
      );
      const counts = join(dir, 'counts');
      const result = await runBaton(['run', file, '--id', 'budget'], { home, env: { COUNT_FILE: counts } });
      expectExit(result, 1);
      expect(result.stdout).toContain('budget: maxSteps');
      const run = await runStatus(home, 'budget');
      expect(run.status).toBe('blocked');
      expect(run.blockedReason).toMatch(/^budget: maxSteps 2/);
      expect(run.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'ready']);
      expect(readCounts(counts).map((c) => c.step)).toEqual(['one', 'two']);
      const events = await timeline(home, 'budget');
      expect(events.some((e) => e.type === 'budget.exceeded' && e.limit === 'maxSteps')).toBe(true);
      // A later check does not spend more of the budget.
      const check = await runBaton(['check'], { home, env: { COUNT_FILE: counts } });
      expectExit(check, 1);
      expect(readCounts(counts)).toHaveLength(2);
    },
    TEST_TIMEOUT,
  );

  it(
    'kills an agent that outlives timeoutMs and reports "timed out"',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan(
          [{ id: 'slow', instruction: 'hang', timeoutMs: 300, retry: { maxAttempts: 1 } }],
          {},
          'agent-hang',
        ),
      );
      // The agent never exits: unless timeoutMs kills it, this run outlives runBaton's 60 s and fails.
      const result = await runBaton(['run', file, '--id', 'tmo'], { home });
      expectExit(result, 1);
      const run = await runStatus(home, 'tmo');
      const step = stepOf(run, 'slow');
      expect(step.status).toBe('blocked');
      expect(step.lastError).toContain('timed out');
      const events = await timeline(home, 'tmo');
      const failed = events.find((e) => e.type === 'step.failed');
      expect(failed?.message).toContain('timed out after 300 ms');
      expect(failed?.failureClass).toBe('transient');
    },
    TEST_TIMEOUT,
  );
});
