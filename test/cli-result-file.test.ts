/**
 * Structured results from agent steps, end to end with real fixture agents: a step's `resultFile`
 * becomes its result value, later steps read it by path, and a missing file, bad JSON, a schema
 * violation or a symlink out of the workspace fail the attempt (agent_failed) with a message the
 * retry's troubleshoot prompt quotes.
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { attempts, expectExit, removeTempDirs, runBaton, stopProcesses, writePlan } from './helpers/cli.js';
import { fixturePlan, planDir } from './helpers/plans.js';
import { loggedPrompts } from './helpers/prompt-log.js';

const TEST_TIMEOUT = 60_000;

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

const checkSchema = {
  type: 'object',
  required: ['passed', 'score'],
  properties: {
    passed: { type: 'boolean' },
    score: { type: 'number' },
    pages: { type: 'array', items: { type: 'object', properties: { url: { type: 'string' } } } },
  },
};

/** The two-step plan: `check` leaves result.json, `report` reads it through its instruction. */
function resultPlan(reportInstruction: string, checkFields: Record<string, unknown> = {}, maxAttempts = 4) {
  return fixturePlan(
    [
      { id: 'check', instruction: 'check the site', resultFile: 'result.json', ...checkFields },
      { id: 'report', instruction: reportInstruction, dependsOn: ['check'] },
    ],
    { defaults: { retry: { maxAttempts, initialDelayMs: 1, maxDelayMs: 5 } } },
    'agent-result-file',
  );
}

async function storedResult(home: string, runId: string, stepId: string) {
  const store = SqliteStore.open(join(home, 'baton.db'));
  try {
    return (await store.getStepResults(runId, [stepId]))[stepId];
  } finally {
    await store.close();
  }
}

describe('resultFile', () => {
  it(
    "becomes the step's result value, and a later step's instruction reads it by path",
    async () => {
      const { dir, home } = planDir();
      const promptLog = join(dir, 'prompts.jsonl');
      const file = writePlan(
        dir,
        resultPlan(
          'passed={{steps.check.result.passed}} score={{steps.check.result.score}} url={{steps.check.result.pages.0.url}} all={{steps.check.result}}',
          { resultSchema: checkSchema },
        ),
      );
      const result = await runBaton(['run', file, '--id', 'res'], {
        home,
        env: { PROMPT_LOG: promptLog, RESULT_PLAN: 'good' },
      });
      expectExit(result, 0);
      const value = { passed: true, score: 0.9, pages: [{ url: 'https://example.com/a' }] };
      const stored = await storedResult(home, 'res', 'check');
      expect(stored?.value).toEqual(value);
      expect(stored?.summary).toBe('done check');
      const report = loggedPrompts(promptLog).find((line) => line.step === 'report');
      expect(report?.prompt).toBe(
        `passed=true score=0.9 url=https://example.com/a all=${JSON.stringify(value)}`,
      );
    },
    TEST_TIMEOUT,
  );

  it(
    "a missing file, bad JSON and a schema violation each fail the attempt, and the retry's prompt names the problem",
    async () => {
      const { dir, home } = planDir();
      const promptLog = join(dir, 'prompts.jsonl');
      const file = writePlan(
        dir,
        resultPlan('passed={{steps.check.result.passed}}', { resultSchema: checkSchema }),
      );
      const result = await runBaton(['run', file, '--id', 'retry'], {
        home,
        env: { PROMPT_LOG: promptLog, RESULT_PLAN: 'missing,badjson,violation,good' },
      });
      expectExit(result, 0);
      const tries = await attempts(home, 'retry', 'check');
      expect(tries.map((t) => [t.outcome, t.failureClass])).toEqual([
        ['failed', 'agent_failed'],
        ['failed', 'agent_failed'],
        ['failed', 'agent_failed'],
        ['succeeded', null],
      ]);
      expect(tries[0]?.message).toContain('resultFile result.json was not written');
      expect(tries[1]?.message).toContain('resultFile result.json is not valid JSON');
      expect(tries[2]?.message).toBe(
        `resultFile result.json does not match the step's resultSchema: /: missing required property "passed"; /score: must be number`,
      );
      const checkPrompts = loggedPrompts(promptLog).filter((line) => line.step === 'check');
      expect(checkPrompts.map((line) => line.attempt)).toEqual([1, 2, 3, 4]);
      expect(checkPrompts[0]?.prompt).toBe('check the site');
      // Each retry's troubleshoot prompt quotes the previous attempt's problem.
      for (const [index, previous] of tries.slice(0, 3).entries()) {
        expect(checkPrompts[index + 1]?.prompt).toContain(previous.message!);
        expect(checkPrompts[index + 1]?.prompt).toContain('check the site');
      }
      expect(loggedPrompts(promptLog).find((line) => line.step === 'report')?.prompt).toBe('passed=true');
    },
    TEST_TIMEOUT,
  );

  it(
    'a result file that is a symlink to a file outside the workspace fails the attempt',
    async () => {
      const { dir, home } = planDir();
      const outside = join(planDir('baton-outside-').dir, 'secret.json');
      const file = writePlan(dir, resultPlan('{{steps.check.result}}', {}, 1));
      const result = await runBaton(['run', file, '--id', 'link'], {
        home,
        env: { RESULT_PLAN: 'symlink', OUTSIDE_FILE: outside },
      });
      expectExit(result, 1);
      const [attempt] = await attempts(home, 'link', 'check');
      expect(attempt?.failureClass).toBe('agent_failed');
      expect(attempt?.message).toContain(`resultFile result.json resolves through a symlink to ${outside}`);
      expect(attempt?.message).toContain('outside the workspace');
      expect((await storedResult(home, 'link', 'check'))?.value).toBeUndefined();
    },
    TEST_TIMEOUT,
  );

  it(
    'a path the result does not have fails the reading step as invalid, naming the reference',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(dir, resultPlan('{{steps.check.result.verdict}}'));
      const result = await runBaton(['run', file, '--id', 'path'], { home, env: { RESULT_PLAN: 'good' } });
      expectExit(result, 1);
      const [attempt] = await attempts(home, 'path', 'report');
      expect(attempt?.failureClass).toBe('invalid');
      expect(attempt?.message).toContain(
        '{{steps.check.result.verdict}}: the result of step "check" has no "verdict" in its result (keys: passed, score, pages)',
      );
    },
    TEST_TIMEOUT,
  );
});
