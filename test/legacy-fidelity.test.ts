/**
 * Where `baton check|step <state.json>` used to differ from the skill's check and runner scripts on
 * the same files (issue 17): each scenario runs the real `baton` on a real state file and reads the
 * file back. What Baton does more safely (atomic writes, the lock, timers) is tested elsewhere.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  expectExit,
  readCounts,
  removeTempDirs,
  spawnBaton,
  stopAgentsAfterEach,
  tempDir,
  waitFor,
} from './helpers/cli.js';
import {
  legacyAgent,
  legacyState,
  readPrompts,
  readState,
  reportOf,
  runLegacy,
  statuses,
  stepIds,
  tmpFilesIn,
  writeState,
} from './helpers/legacy.js';

const countFiles = stopAgentsAfterEach();
afterAll(() => removeTempDirs());

const folder = () => tempDir('baton-legacy-fidelity-');
const echo = { STEP_AGENT_CMD: 'echo' };
/** agent-fail-echo as a prompt recorder that exits 0. */
const recorder = (argvLog: string) => ({
  STEP_AGENT_CMD: legacyAgent('agent-fail-echo'),
  ARGV_LOG: argvLog,
  FAIL_EXIT_CODE: '0',
});

const BLOCKED_LINE = /^BLOCKED step-1: failed 1 tries; last error: false exited with code 1.*$/;

describe('blocked steps', () => {
  it('a blocked check exits 0 and prints its BLOCKED line on every check; --quiet prints only that; STEP_MAX_RETRIES=0 is one try', async () => {
    const file = writeState(folder(), legacyState(['step-1']));
    const env = { STEP_AGENT_CMD: 'false', STEP_MAX_RETRIES: '0' };
    const first = expectExit(await runLegacy('check', file, env), 0);
    expect(readState(file).stepRuns['step-1']).toMatchObject({ status: 'FAILED', tries: 1 });
    expect(readState(file).blockers).toEqual(['step-1']);
    const lines = first.stdout.trimEnd().split('\n');
    expect(lines.filter((line) => line.startsWith('BLOCKED'))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(BLOCKED_LINE);
    // The file was blocked before this check: the line again, and nothing else with --quiet.
    const quiet = expectExit(await runLegacy('check', file, env, { args: ['--quiet'] }), 0);
    expect(quiet.stdout).toMatch(new RegExp(`^${BLOCKED_LINE.source.slice(1, -1)}\n$`));
    expect(quiet.stderr).toBe('');
    expect(readState(file).stepRuns['step-1']).toMatchObject({ tries: 1 });
    // The runner exits 1: the step it was called for is FAILED.
    const step = expectExit(await runLegacy('step', file, env), 1);
    expect(step.stdout).toMatch(/^BLOCKED step-1: /m);
  });

  it('one BLOCKED line per blocked step, in the order of blockers', async () => {
    const failed = (error: string) => ({ status: 'FAILED', tries: 3, error });
    const file = writeState(
      folder(),
      legacyState(['a', 'b', 'c'], {
        stepRuns: { a: failed('no network'), b: failed('disk full'), c: { status: 'DONE', tries: 1 } },
        blockers: ['b', 'a', 'c'],
      }),
    );
    const result = expectExit(await runLegacy('check', file, echo, { args: ['--quiet'] }), 0);
    expect(result.stdout).toBe(
      'BLOCKED b: failed 3 tries; last error: disk full\nBLOCKED a: failed 3 tries; last error: no network\n',
    );
    const report = reportOf(expectExit(await runLegacy('check', file, echo, { json: true }), 0));
    expect(report.blocked.map((entry) => entry.stepId)).toEqual(['b', 'a']);
  });

  it('a blocked step that succeeds after STEP_MAX_RETRIES was raised leaves blockers; that check writes DONE', async () => {
    const file = writeState(
      folder(),
      legacyState(stepIds(2), {
        stepRuns: { 'step-1': { status: 'FAILED', tries: 1, error: 'boom' } },
        blockers: ['step-1'],
      }),
    );
    const result = expectExit(await runLegacy('check', file, { ...echo, STEP_MAX_RETRIES: '3' }), 0);
    expect(result.stdout).not.toContain('BLOCKED');
    const state = readState(file);
    expect(statuses(state)).toEqual({ 'step-1': 'DONE', 'step-2': 'DONE' });
    expect(state.blockers).toEqual([]);
    expect(state.status).toBe('DONE');
  });
});

describe('the file as the skill reads it', () => {
  it('an absolute requiredOutputs path inside the workspace is accepted; required_outputs is read and merged', async () => {
    const dir = folder();
    const state = legacyState(['abs', 'both']);
    state.plan.steps.abs!.requiredOutputs = [join(dir, 'out', 'abs.txt')];
    Object.assign(state.plan.steps.both!, { requiredOutputs: ['camel.md'], required_outputs: ['snake.md'] });
    const file = writeState(dir, state);
    const env = {
      STEP_AGENT_CMD: legacyAgent('agent-write-outputs'),
      WRITE_OUTPUTS: 'out/abs.txt,camel.md',
      STEP_MAX_RETRIES: '0',
    };
    expectExit(await runLegacy('check', file, env), 0);
    const after = readState(file);
    expect(after.stepRuns.abs).toMatchObject({ status: 'DONE' });
    expect(after.artifacts[0]).toBe(join(dir, 'out', 'abs.txt'));
    // camel.md exists; snake.md, named only in the snake-case spelling, does not.
    expect(after.stepRuns.both).toMatchObject({
      status: 'FAILED',
      error: 'Missing required outputs: snake.md',
    });
  });

  it('artifacts: a step that succeeds adds its required outputs after the entries already there, each once; a failed one adds none', async () => {
    const dir = folder();
    const state = legacyState(['write', 'plain', 'broken'], { artifacts: ['/elsewhere/notes.txt', 'a.md'] });
    state.plan.steps.write!.requiredOutputs = ['a.md', 'sub/b.md'];
    state.plan.steps.broken!.requiredOutputs = ['never.md'];
    const file = writeState(dir, state);
    const env = {
      STEP_AGENT_CMD: legacyAgent('agent-write-outputs'),
      WRITE_OUTPUTS: 'a.md,sub/b.md',
      STEP_MAX_RETRIES: '0',
    };
    expectExit(await runLegacy('check', file, env), 0);
    const after = readState(file);
    expect(statuses(after)).toEqual({ write: 'DONE', plain: 'DONE', broken: 'FAILED' });
    // The skill's agent may list files of its own there: they are kept, in their order.
    expect(after.artifacts).toEqual(['/elsewhere/notes.txt', 'a.md', 'sub/b.md']);
  });

  it('a state without top-level status is IN_PROGRESS; an agent that exits 0 talking about limits is DONE', async () => {
    const state: Record<string, unknown> = { ...legacyState(['step-1']) };
    delete state.status;
    const file = writeState(folder(), state);
    const env = {
      STEP_AGENT_CMD: legacyAgent('agent-echo-message'),
      // On stdout and stderr: loose text, no error record.
      ECHO_MESSAGE: "when you've hit your limit the API returns 429 (rate_limit_error); quota exceeded",
    };
    expectExit(await runLegacy('check', file, env), 0);
    const after = readState(file);
    expect(after.stepRuns['step-1']).toMatchObject({ status: 'DONE', tries: 1 });
    expect(after.status).toBe('DONE');
  });

  it('a FAILED step without error gets the troubleshoot prompt with "unknown"', async () => {
    const dir = folder();
    const file = writeState(
      dir,
      legacyState(['step-1'], { stepRuns: { 'step-1': { status: 'FAILED', tries: 1 } } }),
    );
    const argvLog = join(dir, 'prompts.jsonl');
    expectExit(await runLegacy('check', file, recorder(argvLog)), 0);
    expect(readPrompts(argvLog)).toEqual([
      'Step step-1 failed (tries: 1). Previous run ended with: unknown. Please troubleshoot and retry: do step-1',
    ]);
    expect(readState(file).stepRuns['step-1']).toMatchObject({ status: 'DONE', tries: 2 });
  });

  it.each([
    // [tries in the file, STEP_MAX_RETRIES]: at the cap, past it (the skill counts every run), and 0.
    [3, '3'],
    [4, '3'],
    [1, '0'],
  ])('a stale IN_PROGRESS step with tries %i (STEP_MAX_RETRIES=%s) is resumed once more', async (tries, cap) => {
    const dir = folder();
    const file = writeState(
      dir,
      legacyState(['step-1'], {
        stepRuns: { 'step-1': { status: 'IN_PROGRESS', tries, lastRunIso: '2025-01-01T00:00:00Z' } },
      }),
    );
    const argvLog = join(dir, 'prompts.jsonl');
    expectExit(await runLegacy('check', file, { ...recorder(argvLog), STEP_MAX_RETRIES: cap }), 0);
    // The same try again, counted as an interruption, with the prompt of an interrupted try.
    expect(readState(file).stepRuns['step-1']).toMatchObject({ status: 'DONE', tries, interruptions: 1 });
    expect(readState(file).blockers).toEqual([]);
    expect(readPrompts(argvLog)).toEqual([
      tries === 1
        ? 'do step-1'
        : `Step step-1 failed (tries: ${tries - 1}). Previous run ended with: interrupted before it finished (the previous check stopped). Please troubleshoot and retry: do step-1`,
    ]);
  });
});

describe('baton step', () => {
  it('drives the rest of the plan as the skill runner chained into its check', async () => {
    const dir = folder();
    const countFile = join(dir, 'count.txt');
    const file = writeState(dir, legacyState(stepIds(3)));
    const env = { STEP_AGENT_CMD: legacyAgent('agent-count'), COUNT_FILE: countFile };
    const report = reportOf(expectExit(await runLegacy('step', file, env, { json: true }), 0));
    expect(report).toMatchObject({ outcome: 'finished', stepsRun: 3 });
    expect(readCounts(countFile).map((line) => line.step)).toEqual(stepIds(3));
    expect(readState(file).status).toBe('DONE');
  });

  it('stops at a stepDelayMinutes wait, leaving the next step to the heartbeat', async () => {
    const file = writeState(folder(), legacyState(stepIds(2), { stepDelayMinutes: 60 }));
    const report = reportOf(expectExit(await runLegacy('step', file, echo, { json: true }), 0));
    expect(report).toMatchObject({ outcome: 'waiting', stepsRun: 1 });
    expect(statuses(readState(file))).toEqual({ 'step-1': 'DONE', 'step-2': 'PENDING' });
  });
});

describe('baton step on a step blocked at STEP_MAX_RETRIES', () => {
  const cappedAt3 = () =>
    legacyState(stepIds(2), {
      stepRuns: {
        'step-1': { status: 'FAILED', tries: 3, error: 'boom', lastRunIso: '2025-01-01T00:00:00Z' },
      },
      blockers: ['step-1'],
    });
  const TROUBLESHOOT =
    'Step step-1 failed (tries: 3). Previous run ended with: boom. Please troubleshoot and retry: do step-1';

  it('runs it once more, as the skill runner: a fourth try that fails leaves it blocked, exit 1', async () => {
    const dir = folder();
    const file = writeState(dir, cappedAt3());
    const argvLog = join(dir, 'prompts.jsonl');
    const failing = {
      STEP_AGENT_CMD: legacyAgent('agent-fail-echo'),
      ARGV_LOG: argvLog,
      FAIL_MESSAGE: 'still broken',
    };
    // A check leaves it blocked: only `baton step`, called on purpose, runs it.
    expectExit(await runLegacy('check', file, failing), 0);
    expect(readPrompts(argvLog)).toEqual([]);
    const step = expectExit(await runLegacy('step', file, failing), 1);
    expect(readPrompts(argvLog)).toEqual([TROUBLESHOOT]);
    expect(step.stdout).toContain(
      'step-1: blocked (failed 3 tries; last error: boom); baton step runs it once more',
    );
    expect(step.stdout).toMatch(/^BLOCKED step-1: failed 4 tries; last error: still broken$/m);
    const state = readState(file);
    expect(state.stepRuns['step-1']).toMatchObject({ status: 'FAILED', tries: 4, error: 'still broken' });
    expect(state.blockers).toEqual(['step-1']);
    expect(statuses(state)['step-2']).toBe('PENDING');
  });

  it('a fourth try that succeeds unblocks it and drives the rest of the plan, exit 0', async () => {
    const dir = folder();
    const file = writeState(dir, cappedAt3());
    const argvLog = join(dir, 'prompts.jsonl');
    const report = reportOf(expectExit(await runLegacy('step', file, recorder(argvLog), { json: true }), 0));
    expect(report).toMatchObject({ outcome: 'finished', stepsRun: 2, blocked: [] });
    expect(readPrompts(argvLog)).toEqual([TROUBLESHOOT, 'do step-2']);
    const state = readState(file);
    expect(state.stepRuns['step-1']).toMatchObject({ status: 'DONE', tries: 4 });
    expect(state.stepRuns['step-1']?.error).toBeUndefined();
    expect(statuses(state)['step-2']).toBe('DONE');
    expect(state.blockers).toEqual([]);
    expect(state.status).toBe('DONE');
  });
});

describe('a missing state file', () => {
  it('check and step: one line on stderr naming the file, exit 0 (as the skill: && chains go on), nothing created', async () => {
    const dir = folder();
    const missing = join(dir, 'state.json');
    for (const verb of ['check', 'step'] as const) {
      const result = expectExit(await runLegacy(verb, missing, echo, { args: ['--quiet'] }), 0);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n')).toEqual([
        `baton ${verb}: no state file at ${missing}: nothing to do`,
      ]);
    }
    expect(existsSync(`${missing}.baton`)).toBe(false);
    expect(existsSync(missing)).toBe(false);
  });
});

describe('a state.json that is a symlink', () => {
  it('is written at its target (the link stays a link) and locked there, whichever link a check uses', async () => {
    const dir = folder();
    mkdirSync(join(dir, 'real'));
    mkdirSync(join(dir, 'ws'));
    const target = writeState(join(dir, 'real'), legacyState(stepIds(2)));
    const link = join(dir, 'ws', 'state.json');
    symlinkSync(target, link);
    expectExit(await runLegacy('check', link, echo), 0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readState(target).status).toBe('DONE');
    expect(existsSync(`${target}.baton`)).toBe(true);
    expect(existsSync(`${link}.baton`)).toBe(false);
    expect(tmpFilesIn(join(dir, 'real'))).toEqual([]);
    expect(tmpFilesIn(join(dir, 'ws'))).toEqual([]);

    // Two links to one file: a check through the second finds the first one's lock.
    const busyTarget = writeState(join(dir, 'real'), legacyState(['slow']), 'busy.json');
    const [first, second] = [join(dir, 'ws', 'a.json'), join(dir, 'ws', 'b.json')];
    symlinkSync(busyTarget, first);
    symlinkSync(busyTarget, second);
    const countFile = join(dir, 'count.txt');
    countFiles.push(countFile);
    const env = { STEP_AGENT_CMD: legacyAgent('agent-count'), COUNT_FILE: countFile, SLEEP_MS: '30000' };
    const holder = spawnBaton(['check', first], { env });
    await waitFor(() => readCounts(countFile)[0], 15_000, 'the first check to start its agent');
    const report = reportOf(expectExit(await runLegacy('check', second, env, { json: true }), 0));
    expect(report.outcome).toBe('busy');
    holder.child.kill('SIGKILL');
    await holder.exited;
    expect(readFileSync(busyTarget, 'utf8')).toContain('"IN_PROGRESS"');
    expect(lstatSync(first).isSymbolicLink()).toBe(true);
  });
});
