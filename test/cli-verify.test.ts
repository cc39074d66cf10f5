/**
 * Verification gates (`verify:`), end to end: `baton run` as a real child process, a fixture agent
 * that fixes a failing test only once its prompt quotes the failure, a fixture test suite as the
 * trusted verify command, and a rubric graded over real HTTP by `baton mock-llm`'s server.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startMockLlmServer } from '../src/testing/mock-llm/server.js';
import type { MockLlmServer } from '../src/testing/mock-llm/types.js';
import {
  agentCommand,
  expectExit,
  isAlive,
  removeTempDirs,
  runBaton,
  runStatus,
  spawnBaton,
  stopProcesses,
  timeline,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir, stepOf } from './helpers/plans.js';
import { loggedPrompts } from './helpers/prompt-log.js';
import { describeWithBwrap } from './helpers/sandbox.js';

const TEST_TIMEOUT = 60_000;
let server: MockLlmServer | null = null;

afterEach(async () => {
  await stopProcesses();
  await server?.close();
  server = null;
});
afterAll(() => removeTempDirs());

/** One agent step `fix` that must leave answer.txt and pass `verify`. */
function verifyPlan(verify: object, maxAttempts = 3) {
  return fixturePlan(
    [{ id: 'fix', instruction: 'make the answer test pass', requiredOutputs: ['answer.txt'], verify }],
    { defaults: { retry: { maxAttempts, initialDelayMs: 1, maxDelayMs: 5 } } },
    'agent-fix-test',
  );
}

const testSuite = { command: agentCommand('verify-answer') };

type VerifiedStep = { verification?: { passed: boolean; iterations: number; failures: string[] } };

describe('verify.command', () => {
  it(
    "fails the attempt on a failing test, quotes the failure in the retry's prompt, and passes on the fix",
    async () => {
      const { dir, home } = planDir();
      const promptLog = join(dir, 'prompts.jsonl');
      const file = writePlan(dir, verifyPlan(testSuite));
      expectExit(await runBaton(['run', file, '--id', 'v1'], { home, env: { PROMPT_LOG: promptLog } }), 0);
      const run = await runStatus(home, 'v1');
      expect(run.status).toBe('succeeded');
      const step = stepOf(run, 'fix') as (typeof run.steps)[number] & VerifiedStep;
      expect(step.attempt).toBe(2);
      expect(step.verification).toEqual({ passed: true, iterations: 2, failures: [] });
      const [first, second] = loggedPrompts(promptLog);
      expect(first!.prompt).not.toContain('AssertionError');
      expect(second!.prompt).toContain('verification failed (check 1 of 3)');
      expect(second!.prompt).toContain('AssertionError: expected 42, got 41');
      expect(readFileSync(join(dir, 'answer.txt'), 'utf8')).toBe('42\n');
      const text = expectExit(await runBaton(['status', 'v1'], { home }), 0);
      expect(text.stdout).toContain('fix verified: passed after 2 checks');
    },
    TEST_TIMEOUT,
  );

  it(
    'quotes only the last 4 KB of a long output',
    async () => {
      const { dir, home } = planDir();
      const promptLog = join(dir, 'prompts.jsonl');
      const file = writePlan(dir, verifyPlan(testSuite));
      const env = { PROMPT_LOG: promptLog, VERIFY_NOISE_BYTES: '20000' };
      expectExit(await runBaton(['run', file, '--id', 'v2'], { home, env }), 0);
      const quoted = loggedPrompts(promptLog)[1]!.prompt;
      expect(quoted).toContain('AssertionError: expected 42, got 41');
      const dots = quoted.match(/\.{100,}/)?.[0] ?? '';
      expect(dots.length).toBeGreaterThan(3000);
      expect(dots.length).toBeLessThan(4096);
    },
    TEST_TIMEOUT,
  );

  it(
    'blocks the step with its last failures when the check never passes, and a retry counts afresh',
    async () => {
      const { dir, home } = planDir();
      const verifyLog = join(dir, 'verify.log');
      const file = writePlan(dir, verifyPlan(testSuite));
      const env = { FIX_ANSWER: '40', VERIFY_LOG: verifyLog };
      expectExit(await runBaton(['run', file, '--id', 'v3'], { home, env }), 1);
      const run = await runStatus(home, 'v3');
      const step = stepOf(run, 'fix');
      expect(step.status).toBe('blocked');
      expect(step.attempt).toBe(3);
      expect(step.blockedReason).toContain('verification did not pass in 3 of 3 checks');
      expect(step.blockedReason).toContain('AssertionError: expected 42, got 40');
      expect(readFileSync(verifyLog, 'utf8').trim().split('\n')).toEqual(['run 1', 'run 2', 'run 3']);
      // A person fixed the cause and retries: the checks of the round before do not count.
      expectExit(await runBaton(['retry', 'v3', 'fix'], { home }), 0);
      expectExit(await runBaton(['check'], { home, env: { FIX_ANSWER: '42' } }), 0);
      const after = stepOf(await runStatus(home, 'v3'), 'fix') as ReturnType<typeof stepOf> & VerifiedStep;
      expect(after.status).toBe('succeeded');
      expect(after.verification).toEqual({ passed: true, iterations: 1, failures: [] });
    },
    TEST_TIMEOUT,
  );

  it(
    'stops at verify.maxIterations before the tries are used up',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(dir, verifyPlan({ ...testSuite, maxIterations: 2 }, 5));
      expectExit(await runBaton(['run', file, '--id', 'v4'], { home, env: { FIX_ANSWER: '7' } }), 1);
      const step = stepOf(await runStatus(home, 'v4'), 'fix');
      expect(step.status).toBe('blocked');
      expect(step.attempt).toBe(2);
      expect(step.blockedReason).toContain(
        'verification did not pass in 2 of 2 checks (verify.maxIterations)',
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'refuses a plan whose verify command is not trusted, or that verifies a function step, naming the field',
    async () => {
      const { dir, home } = planDir();
      const untrusted = writePlan(dir, verifyPlan({ command: ['sh', '-c', 'npm test'] }), 'untrusted.yaml');
      const refused = expectExit(await runBaton(['run', untrusted], { home }), 2);
      expect(refused.stderr).toContain('steps.fix.verify.command');
      const onFn = writePlan(dir, fixturePlan([{ id: 'calc', fn: 'calc', verify: testSuite }]), 'fn.yaml');
      const invalid = expectExit(await runBaton(['run', onFn], { home }), 2);
      expect(invalid.stderr).toContain('steps.calc.verify');
      expect(invalid.stderr).toContain('this is a fn step');
      const noModel = writePlan(dir, verifyPlan({ rubric: 'rubric.md' }), 'no-model.yaml');
      const missing = expectExit(await runBaton(['run', noModel], { home }), 2);
      expect(missing.stderr).toContain('steps.fix.verify.model');
      expect(existsSync(join(dir, 'answer.txt'))).toBe(false);
    },
    TEST_TIMEOUT,
  );
});

describe('verify.rubric', () => {
  it(
    "is graded by a model: failed criteria go into the retry's prompt and the grader's tokens count in the run",
    async () => {
      const verdict = (first: boolean) =>
        JSON.stringify({
          criteria: [
            { id: 1, passed: first, reason: first ? 'it is 42' : 'the answer is 41: expected 42' },
            { id: 2, passed: true, reason: 'one line' },
          ],
        });
      server = await startMockLlmServer({
        script: [
          { fault: 'ok', when: { promptIncludes: 'strict reviewer' }, reply: { text: verdict(false) } },
          {
            fault: 'ok',
            when: { promptIncludes: 'strict reviewer' },
            reply: { text: `Here it is:\n\`\`\`json\n${verdict(true)}\n\`\`\`` },
          },
        ],
      });
      const { dir, home } = planDir();
      writeFileSync(join(dir, 'rubric.md'), '# The answer\n- The answer is 42\n- It is a single line\n');
      const promptLog = join(dir, 'prompts.jsonl');
      const model = {
        provider: 'openai',
        model: 'grader-test',
        baseUrl: server.openaiBaseUrl,
        apiKeyEnv: 'GRADER_KEY',
        price: { inputPerMTok: 1, outputPerMTok: 2 },
      };
      const file = writePlan(dir, verifyPlan({ rubric: 'rubric.md', model }));
      const env = { PROMPT_LOG: promptLog, GRADER_KEY: 'sk-grader-key-0123456789' };
      expectExit(await runBaton(['run', file, '--id', 'r1'], { home, env }), 0);
      const run = await runStatus(home, 'r1');
      const step = stepOf(run, 'fix') as ReturnType<typeof stepOf> & VerifiedStep;
      expect(step.verification).toEqual({ passed: true, iterations: 2, failures: [] });
      expect(loggedPrompts(promptLog)[1]!.prompt).toContain(
        'criterion "The answer is 42" failed: the answer is 41: expected 42',
      );
      const graded = server.requests.filter((request) => request.model === 'grader-test');
      expect(graded).toHaveLength(2);
      // The fixture agent reports no usage: what the run counts is the grader's.
      expect(run.usage?.inputTokens).toBeGreaterThan(0);
      expect(run.usage?.costUsd).toBeGreaterThan(0);
    },
    TEST_TIMEOUT,
  );
});

describeWithBwrap('verify.command of a confined step', () => {
  it('runs confined like the agent: it writes nothing outside the workspace (unconfined, it does)', async () => {
    const { dir, home } = planDir();
    const outside = join(dir, 'escaped.txt');
    const plan = (sandbox: string) =>
      fixturePlan(
        [{ id: 'fix', instruction: 'fix it', requiredOutputs: ['answer.txt'], verify: testSuite }],
        { workspace: './work', defaults: { sandbox, retry: { maxAttempts: 1 } } },
        'agent-fix-test',
      );
    const env = { FIX_ANSWER: '42', VERIFY_OUTSIDE: outside };
    const confined = writePlan(dir, plan('workspace'), 'confined.yaml');
    expectExit(await runBaton(['run', confined, '--id', 'boxed'], { home, env }), 0);
    expect(stepOf(await runStatus(home, 'boxed'), 'fix').status).toBe('succeeded');
    expect(existsSync(outside)).toBe(false);
    const open = writePlan(dir, plan('none'), 'open.yaml');
    expectExit(await runBaton(['run', open, '--id', 'open'], { home, env }), 0);
    expect(existsSync(outside)).toBe(true);
  });
});

describe('verify.command and a worker killed while it runs', () => {
  it('the check is stopped as an orphan, the attempt counts as interrupted, and the next one passes', async () => {
    const { dir, home } = planDir();
    const pidFile = join(dir, 'verify.pid');
    const env = { FIX_ANSWER: '42', VERIFY_HANG_ATTEMPT: '1', VERIFY_PID_FILE: pidFile };
    const file = writePlan(dir, verifyPlan(testSuite));
    expectExit(await runBaton(['run', file, '--id', 'killed', '--detach'], { home, env }), 0);
    const doomed = spawnBaton(['worker', '--lease', '1s'], { home, env });
    const pid = await waitFor(
      () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : undefined),
      30_000,
      'the check to start',
    );
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    expect(isAlive(pid)).toBe(true);
    const rescuer = spawnBaton(['worker', '--lease', '1s'], { home, env });
    await waitFor(() => !isAlive(pid), 30_000, `the orphaned check ${pid} to be stopped`);
    await waitFor(
      async () => ((await runStatus(home, 'killed')).status === 'succeeded' ? true : undefined),
      60_000,
      'the run to succeed',
    );
    rescuer.child.kill('SIGTERM');
    await rescuer.exited;
    const step = stepOf(await runStatus(home, 'killed'), 'fix') as ReturnType<typeof stepOf> & VerifiedStep;
    // Attempt 1 never finished its check: only attempt 2's counts.
    expect(step.verification).toEqual({ passed: true, iterations: 1, failures: [] });
    const failed = (await timeline(home, 'killed')).filter((e) => e.type === 'step.failed');
    expect(failed.map((e) => e.failureClass)).toEqual(['interrupted']);
  }, 120_000);
});
