/**
 * Guards found by review: flags checked before anything is stored, plans the CLI cannot run,
 * budgets, folders in the way, arguments that would be read as options, and stop signals.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectExit, removeTempDirs, runBaton, runStatus, tempDir, writePlan } from './helpers/cli.js';
import { legacyAgent, legacyState, readState, runLegacy, writeState } from './helpers/legacy.js';
import { fixturePlan, planDir } from './helpers/plans.js';

afterAll(removeTempDirs);

describe('the CLI refuses before storing anything', () => {
  it.each([
    [['--concurrency', '0'], /--concurrency/],
    [['--lease', '100d'], /a lease must be from 100ms to 24h/],
  ])('run %j: exit 2 and no run stored', async (flags, message) => {
    const { dir, home } = planDir();
    const plan = writePlan(dir, fixturePlan([{ id: 'a', instruction: 'x' }]));
    const result = expectExit(await runBaton(['run', plan, ...flags], { home }), 2);
    expect(result.stderr).toMatch(message);
    expect(existsSync(join(home, 'baton.db'))).toBe(false);
  });

  it('refuses a plan with function steps, which only a program that registers them can run', async () => {
    const { dir, home } = planDir();
    const plan = writePlan(dir, { name: 'fns', steps: [{ id: 'publish', fn: 'publish' }] });
    const result = expectExit(await runBaton(['run', plan], { home }), 2);
    expect(result.stderr).toMatch(/publish \(fn: publish\) call TypeScript functions.*baton\.startPlan\(\)/);
    expect(existsSync(join(home, 'baton.db'))).toBe(false);
  });

  it('names a file that is in the way of the Baton folder or of init', async () => {
    const dir = tempDir();
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, 'x');
    const status = expectExit(
      await runBaton(['flow', 'set', 'k', '--concurrency', '1'], { home: join(file, 'home') }),
      2,
    );
    expect(status.stderr).toMatch(/cannot use .* as the Baton folder \(a file is in the way\)/);
    const init = expectExit(await runBaton(['init', file]), 2);
    expect(init.stderr).toMatch(/is not a folder that can be created/);
  });
});

describe('budgets and prompts', () => {
  it('retry in a run stopped by its budget points to resume; resume lets it finish', async () => {
    const { dir, home } = planDir();
    const steps = [
      { id: 'a', instruction: 'a' },
      { id: 'b', instruction: 'b', dependsOn: ['a'] },
    ];
    const plan = writePlan(dir, fixturePlan(steps, { limits: { maxSteps: 1 } }));
    const run = expectExit(await runBaton(['run', plan, '--id', 'budget'], { home }), 1);
    expect(run.stdout).toMatch(/budget: maxSteps 1 reached.*baton resume budget/);
    const retry = expectExit(await runBaton(['retry', 'budget', 'b'], { home }), 2);
    expect(retry.stderr).toMatch(/stopped by its budget.*baton resume budget/);
    expectExit(await runBaton(['resume', 'budget'], { home }), 0);
    expectExit(await runBaton(['check'], { home }), 0);
    expect((await runStatus(home, 'budget')).status).toBe('succeeded');
  });

  it('a prompt that starts with "-" still reaches the agent as its last, plain argument', async () => {
    const { dir, home } = planDir();
    const argvFile = join(dir, 'argv.json');
    const plan = writePlan(
      dir,
      fixturePlan(
        [{ id: 'a', instruction: '{{inputs.flag}}' }],
        { inputs: { flag: { default: '--dangerously-skip-permissions' } } },
        'agent-echo-argv',
      ),
    );
    expectExit(await runBaton(['run', plan], { home, env: { ARGV_FILE: argvFile } }), 0);
    const argv = JSON.parse(readFileSync(argvFile, 'utf8')) as string[];
    expect(argv[argv.length - 1]).toBe(' --dangerously-skip-permissions');
  });

  it('refuses python -m, whose module may run its arguments as code', async () => {
    const { dir, home } = planDir();
    const plan = writePlan(dir, {
      name: 'm',
      defaults: { agent: { command: ['python3', '-m', 'timeit', '-n', '1'] } },
      steps: [{ id: 'a', instruction: 'x' }],
    });
    const result = expectExit(await runBaton(['run', plan], { home }), 2);
    expect(result.stderr).toMatch(/"-m" .* makes "python3" run a library module/);
  });
});

describe('state.json guards', () => {
  it('an exit 0 with a JSON error record is FAILED, as in native runs', async () => {
    const dir = tempDir();
    // agent-echo-raw prints its prompt as is: the last stdout line is a claude-style error record.
    const state = legacyState(['step-1']);
    state.plan.steps['step-1']!.instruction = JSON.stringify({
      type: 'result',
      subtype: 'error_max_turns',
      is_error: true,
    });
    const file = writeState(dir, state);
    await runLegacy('step', file, { STEP_AGENT_CMD: legacyAgent('agent-echo-raw') }, { args: ['--one'] });
    expect(readState(file).stepRuns['step-1']).toMatchObject({ status: 'FAILED' });
    expect(readState(file).stepRuns['step-1']!.error).toMatch(/error_max_turns/);
  });

  it('a step id with a path in it keeps its log inside the sidecar folder', async () => {
    const dir = tempDir();
    const sub = join(dir, 'ws');
    mkdirSync(sub);
    const file = writeState(sub, legacyState(['../../escaped']));
    expectExit(await runLegacy('check', file, { STEP_AGENT_CMD: 'echo' }), 0);
    expect(readState(file).stepRuns['../../escaped']!.status).toBe('DONE');
    expect(readdirSync(dir).sort()).toEqual(['ws']);
    expect(readdirSync(join(sub, 'state.json.baton', 'logs'))[0]).toMatch(
      /^__\.\._escaped-[0-9a-f]{8}\.try-1\.log$/,
    );
  });

  it('refuses a step id holding control characters, file unchanged', async () => {
    const dir = tempDir();
    const file = writeState(dir, legacyState(['a\u0000b']));
    const before = readFileSync(file);
    const result = expectExit(await runLegacy('check', file, { STEP_AGENT_CMD: 'echo' }), 2);
    expect(result.stderr).toMatch(/control characters/);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('--max-time stops a hanging agent; that try does not count', async () => {
    const dir = tempDir();
    const file = writeState(dir, legacyState(['step-1']));
    const result = await runLegacy(
      'check',
      file,
      { STEP_AGENT_CMD: legacyAgent('agent-hang') },
      { json: true, args: ['--max-time', '1s'] },
    );
    // The agent never exits: without the 1 s limit this check would outlive runBaton's 60 s and fail.
    expect(result.code).toBe(0);
    expect(readState(file).stepRuns['step-1'] ?? { status: 'PENDING', tries: 0 }).toMatchObject({
      status: 'PENDING',
      tries: 0,
    });
  });
});
