/**
 * Failure classes any agent can declare (issue 40, item 2): a `{"baton":{"class":…}}` line on
 * stdout (the last one wins), the plan's `agent.exitCodes`, and an HTTP status in a structured
 * error record the generic profile reads. `invalid` and `fatal` go to a person after one try;
 * `transient` and `agent_failed` are retried. The same on the state.json path (STEP_EXIT_CODES).
 * Real `baton` processes running a real fixture agent.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  agentCommand,
  attempts,
  removeTempDirs,
  runBaton,
  runStatus,
  tempDir,
  writePlan,
} from './helpers/cli.js';
import { legacyAgent, legacyState, readState, runLegacy, writeState } from './helpers/legacy.js';

afterAll(() => removeTempDirs());

const line = (value: unknown) => JSON.stringify(value);

/** What the fixture agent does per step: see test/fixtures/agent-declare.mjs. */
const SCRIPT = {
  'line-invalid': {
    stdout: ['working', line({ baton: { class: 'invalid', message: 'parameter market is unknown' } })],
    exit: 1,
  },
  'line-fatal-exit-0': {
    stdout: [line({ baton: { class: 'fatal', message: 'no access to the CRM' } })],
    exit: 0,
  },
  'line-transient': {
    stdout: [line({ baton: { class: 'transient', message: 'upstream busy', retryAfterMs: 20 } })],
    exit: 1,
  },
  'last-wins': {
    stdout: [
      line({ baton: { class: 'invalid', message: 'first thought' } }),
      line({ baton: { class: 'agent_failed', message: 'second thought' } }),
    ],
    exit: 1,
  },
  malformed: { stdout: [line({ baton: { class: 'bogus' } })], exit: 1 },
  'exit-64': { stderr: 'usage: report --market <name>', exit: 64 },
  'exit-75': { stderr: 'try again later', exit: 75 },
  'http-400': {
    stdout: [
      line({ is_error: true, api_error_status: 400, result: 'invalid_request_error: parameter "market"' }),
    ],
    exit: 1,
  },
  'http-403': { stdout: [line({ error: { code: 403, message: 'forbidden' } })], exit: 0 },
  'http-503': { stdout: [line({ error: { status: '503', message: 'overloaded' } })], exit: 1 },
  plain: { stderr: 'Error: 400 invalid_request_error: parameter "market"', exit: 1 },
};

/** step id -> [failure class of every attempt, blocked after them?] */
const EXPECTED: Record<string, [string[], boolean]> = {
  'line-invalid': [['invalid'], true],
  'line-fatal-exit-0': [['fatal'], true],
  'line-transient': [['transient', 'transient', 'transient'], true],
  'last-wins': [['agent_failed', 'agent_failed', 'agent_failed'], true],
  malformed: [['invalid'], true],
  'exit-64': [['invalid'], true],
  'exit-75': [['transient', 'transient', 'transient'], true],
  'http-400': [['invalid'], true],
  'http-403': [['fatal'], true],
  'http-503': [['transient', 'transient', 'transient'], true],
  // Nothing declared: today's rule, agent_failed and retried.
  plain: [['agent_failed', 'agent_failed', 'agent_failed'], true],
};

describe('a failure class the agent declares', () => {
  it('decides the attempt on a plan step: invalid and fatal block after one try, the others are retried', async () => {
    const dir = tempDir('baton-declared-');
    const home = `${dir}/home`;
    const file = writePlan(dir, {
      name: 'declared',
      defaults: {
        agent: { command: agentCommand('agent-declare'), exitCodes: { 64: 'invalid', 75: 'transient' } },
        retry: { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 50 },
      },
      limits: { noProgressAfter: 10 },
      steps: Object.keys(SCRIPT).map((id) => ({ id, instruction: `do ${id}` })),
    });
    const result = await runBaton(['run', file, '--json'], {
      home,
      env: { DECLARE_SCRIPT: JSON.stringify(SCRIPT) },
      timeoutMs: 120_000,
    });
    expect(result.code, result.stderr).toBe(1);
    const run = await runStatus(home, (JSON.parse(result.stdout) as { id: string }).id);
    const seen: Record<string, [string[], boolean]> = {};
    for (const id of Object.keys(SCRIPT)) {
      const tries = await attempts(home, run.id, id);
      const step = run.steps.find((s) => s.stepId === id);
      seen[id] = [tries.map((t) => t.failureClass ?? 'none'), step?.status === 'blocked'];
    }
    expect(seen).toEqual(EXPECTED);
    const messages = Object.fromEntries(
      await Promise.all(
        ['line-invalid', 'line-fatal-exit-0', 'malformed', 'exit-64', 'http-400'].map(
          async (id) => [id, (await attempts(home, run.id, id))[0]?.message] as const,
        ),
      ),
    );
    expect(messages['line-invalid']).toBe('parameter market is unknown');
    expect(messages['line-fatal-exit-0']).toBe('no access to the CRM');
    expect(messages.malformed).toMatch(
      /"class" must be one of transient, agent_failed, invalid, fatal, got "bogus"/,
    );
    expect(messages['exit-64']).toMatch(/exited with code 64 \(invalid by agent\.exitCodes\): usage: report/);
    expect(messages['http-400']).toMatch(/HTTP 400.*parameter "market"/);
    // A blocked step says why in status, with the agent's own words.
    expect(run.steps.find((s) => s.stepId === 'line-invalid')?.blockedReason).toMatch(
      /parameter market is unknown/,
    );
  }, 180_000);

  it('refuses an exit-code map that is not codes 1-255 to declarable classes, naming the field', async () => {
    const dir = tempDir('baton-declared-bad-');
    const file = writePlan(dir, {
      name: 'bad-map',
      defaults: {
        agent: { command: agentCommand('agent-declare'), exitCodes: { 0: 'invalid', 64: 'budget' } },
      },
      steps: [{ id: 'a', instruction: 'x' }],
    });
    const result = await runBaton(['propose', file], { home: `${dir}/home` });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/defaults\.agent\.exitCodes/);
    expect(result.stderr).toMatch(/"0" is not an exit code/);
    expect(result.stderr).toMatch(
      /"budget" is not a class an agent may declare: use transient, agent_failed, invalid, fatal/,
    );
  });
});

describe('on the state.json path', () => {
  const env = (log: string) => ({
    STEP_AGENT_CMD: legacyAgent('agent-declare'),
    STEP_EXIT_CODES: '64=invalid,75=transient',
    STEP_MAX_RETRIES: '3',
    DECLARE_SCRIPT: JSON.stringify(SCRIPT),
    DECLARE_LOG: log,
  });

  for (const [id, blockedAfter] of [
    ['line-invalid', 1],
    ['exit-64', 1],
    ['http-403', 1],
    ['exit-75', 3],
    ['plain', 3],
  ] as const) {
    it(`${id}: ${blockedAfter === 1 ? 'blocked after one try, with the class in the file' : 'retried as today'}`, async () => {
      const dir = tempDir('baton-declared-legacy-');
      const file = writeState(dir, legacyState([id]));
      for (let check = 0; check < 5; check++) await runLegacy('check', file, env(`${dir}/calls.log`));
      const state = readState(file);
      expect(state.blockers).toEqual([id]);
      expect(state.stepRuns[id]).toMatchObject({ status: 'FAILED', tries: blockedAfter });
      if (blockedAfter === 1) {
        expect((state.stepRuns[id] as { failureClass?: string }).failureClass).toMatch(/^(invalid|fatal)$/);
        const result = await runLegacy('check', file, env(`${dir}/calls.log`));
        expect(result.stdout).toMatch(
          new RegExp(`^BLOCKED ${id}: (invalid|fatal), as the agent declared: not retried`, 'm'),
        );
      } else {
        expect((state.stepRuns[id] as { failureClass?: string }).failureClass).toBeUndefined();
      }
    }, 120_000);
  }

  it('refuses a STEP_EXIT_CODES it cannot read, naming the pair (exit 2)', async () => {
    const dir = tempDir('baton-declared-legacy-bad-');
    const file = writeState(dir, legacyState(['a']));
    const result = await runLegacy('check', file, {
      ...env(`${dir}/calls.log`),
      STEP_EXIT_CODES: '64=invalid,300=fatal',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/STEP_EXIT_CODES: "300=fatal" is not <exit code 1-255>=<class>/);
  });
});
