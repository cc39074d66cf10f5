/**
 * `baton check|step <state.json>` as a drop-in for the Python agent-step-sequencer skill: every
 * behaviour the skill documented (its own tests did exactly these), scenario by scenario, with real
 * `baton` processes on real files, reading the file back after each check.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  countByStep,
  expectExit,
  readCounts,
  removeTempDirs,
  runBaton,
  runStatus,
  sleep,
  tempDir,
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
  writeState,
} from './helpers/legacy.js';

afterAll(() => removeTempDirs());

const TWO_STEPS = stepIds(2);
const echo = { STEP_AGENT_CMD: 'echo' };

function folder(): string {
  return tempDir('baton-legacy-');
}

describe('the skill documented behaviour', () => {
  it('a missing state file: exit 0 and nothing is created', async () => {
    const dir = folder();
    const result = expectExit(await runLegacy('check', join(dir, 'state.json'), echo, { json: true }), 0);
    expect(reportOf(result)).toMatchObject({ outcome: 'missing', stepsRun: 0 });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('status DONE: nothing happens and the file is unchanged', async () => {
    const dir = folder();
    const file = writeState(dir, {
      plan: { steps: {} },
      stepQueue: [],
      currentStep: 0,
      stepRuns: {},
      status: 'DONE',
    });
    const before = readFileSync(file);
    const result = expectExit(await runLegacy('check', file, echo, { json: true }), 0);
    expect(reportOf(result).outcome).toBe('done');
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('echo on two steps: one check runs both and marks the state DONE (cursor 2)', async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(TWO_STEPS));
    const first = expectExit(await runLegacy('check', file, echo, { json: true }), 0);
    expect(reportOf(first)).toMatchObject({ outcome: 'finished', stepsRun: 2, blockers: [] });
    const state = readState(file);
    expect(statuses(state)).toEqual({ 'step-1': 'DONE', 'step-2': 'DONE' });
    expect(state.currentStep).toBe(2);
    expect(state.status).toBe('DONE');
    expect(state.stepRuns['step-1']).toMatchObject({ tries: 1 });
    expect(Date.parse(state.stepRuns['step-1']!.lastRunIso!)).not.toBeNaN();
    expect(Date.parse(state.lastHeartbeatIso!)).not.toBeNaN();

    // A third check leaves the finished file alone.
    const done = readFileSync(file);
    expect(reportOf(expectExit(await runLegacy('check', file, echo, { json: true }), 0)).outcome).toBe(
      'done',
    );
    expect(readFileSync(file).equals(done)).toBe(true);
  });

  it('STEP_AGENT_CMD=false: the step is FAILED with an error', async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(['step-1']));
    // The runner alone: one try.
    await runLegacy('step', file, { STEP_AGENT_CMD: 'false' }, { args: ['--one'] });
    let run = readState(file).stepRuns['step-1']!;
    expect(run.status).toBe('FAILED');
    expect(run.tries).toBe(1);
    expect(run.error!.length).toBeGreaterThan(0);
    // The check: retried up to STEP_MAX_RETRIES (3), still FAILED with an error.
    expectExit(await runLegacy('check', file, { STEP_AGENT_CMD: 'false' }), 0);
    run = readState(file).stepRuns['step-1']!;
    expect(run.status).toBe('FAILED');
    expect(run.tries).toBe(3);
    expect(typeof run.error).toBe('string');
    expect(run.error!.length).toBeGreaterThan(0);
  });

  it("an agent's stderr echoing a secret from the environment leaves it masked in the state file", async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(['step-1']));
    const secret = 'zz9MYREALKEY0123456789abcdef';
    const env = {
      STEP_AGENT_CMD: legacyAgent('agent-fail'),
      FAIL_MESSAGE: `unauthorized: ${secret} was rejected`,
      ANTHROPIC_API_KEY: secret,
      STEP_MAX_RETRIES: '1',
    };
    const result = expectExit(await runLegacy('check', file, env), 0);
    expect(readState(file).stepRuns['step-1']?.error).toBe('unauthorized: [redacted] was rejected');
    expect(readFileSync(file, 'utf8')).not.toContain(secret);
    expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it('a webhook URL an agent echoes (SLACK_WEBHOOK_URL: secret by its name) is masked in the state file and the output', async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(['step-1']));
    const token = 'xoxoXOXO1234abcdWEBHOOKTOKEN';
    const webhook = `https://hooks.slack.com/services/T0123ABCD/B0456EFGH/${token}`;
    const env = {
      STEP_AGENT_CMD: legacyAgent('agent-fail'),
      // The token alone too: an agent may print only the part it parsed out.
      FAIL_MESSAGE: `posting to ${webhook} failed; token ${token} refused`,
      SLACK_WEBHOOK_URL: webhook,
      STEP_MAX_RETRIES: '1',
    };
    const result = expectExit(await runLegacy('check', file, env, { json: true }), 0);
    expect(readState(file).stepRuns['step-1']?.error).toBe(
      'posting to [redacted] failed; token [redacted] refused',
    );
    const written = readFileSync(file, 'utf8') + result.stdout + result.stderr;
    expect(written).not.toContain(token);
    expect(written).not.toContain('hooks.slack.com/services');
  });

  it('STEP_MAX_RETRIES=2: one check retries with the troubleshoot prompt, then blocks the step', async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(['step-1']));
    const argvLog = join(dir, 'prompts.jsonl');
    const env = { STEP_AGENT_CMD: legacyAgent('agent-fail-echo'), ARGV_LOG: argvLog, STEP_MAX_RETRIES: '2' };
    const result = expectExit(await runLegacy('check', file, env, { json: true }), 0);
    expect(reportOf(result)).toMatchObject({ outcome: 'blocked', stepsRun: 2, blockers: ['step-1'] });
    const state = readState(file);
    expect(state.stepRuns['step-1']).toMatchObject({
      status: 'FAILED',
      tries: 2,
      error: 'agent-fail-echo failed',
    });
    expect(state.blockers).toEqual(['step-1']);
    expect(state.status).toBe('IN_PROGRESS');
    // The troubleshoot prompt reaches the agent as its last argument, in the skill's words.
    expect(readPrompts(argvLog)).toEqual([
      'do step-1',
      'Step step-1 failed (tries: 1). Previous run ended with: agent-fail-echo failed. Please troubleshoot and retry: do step-1',
    ]);
  });

  it('default STEP_MAX_RETRIES is 3', async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(['step-1']));
    const argvLog = join(dir, 'prompts.jsonl');
    const env = { STEP_AGENT_CMD: legacyAgent('agent-fail-echo'), ARGV_LOG: argvLog, FAIL_MESSAGE: 'nope' };
    expectExit(await runLegacy('check', file, env), 0);
    expect(readState(file).stepRuns['step-1']).toMatchObject({ status: 'FAILED', tries: 3 });
    expect(readPrompts(argvLog).slice(1)).toEqual([
      'Step step-1 failed (tries: 1). Previous run ended with: nope. Please troubleshoot and retry: do step-1',
      'Step step-1 failed (tries: 2). Previous run ended with: nope. Please troubleshoot and retry: do step-1',
    ]);
  });

  it('step-1 DONE with currentStep 0: one check advances and runs step-2', async () => {
    const dir = folder();
    const countFile = join(dir, 'count.txt');
    const file = writeState(
      dir,
      legacyState(TWO_STEPS, {
        stepRuns: { 'step-1': { status: 'DONE', tries: 1, lastRunIso: '2025-01-01T00:00:00Z' } },
      }),
    );
    const env = { STEP_AGENT_CMD: legacyAgent('agent-count'), COUNT_FILE: countFile };
    const result = expectExit(await runLegacy('check', file, env, { json: true }), 0);
    expect(reportOf(result).stepsRun).toBe(1);
    const state = readState(file);
    expect(state.currentStep).toBe(2);
    expect(statuses(state)).toEqual({ 'step-1': 'DONE', 'step-2': 'DONE' });
    expect(state.stepRuns['step-1']).toEqual({
      status: 'DONE',
      tries: 1,
      lastRunIso: '2025-01-01T00:00:00Z',
    });
    expect(readCounts(countFile).map((line) => line.step)).toEqual(['step-2']);
    expect(readState(file).status).toBe('DONE');
  });

  it('requiredOutputs missing: FAILED with "Missing required outputs: out.md"', async () => {
    const dir = folder();
    const state = legacyState(['step-1']);
    state.plan.steps['step-1']!.requiredOutputs = ['out.md'];
    const file = writeState(dir, state);
    await runLegacy('step', file, echo);
    const run = readState(file).stepRuns['step-1']!;
    expect(run.status).toBe('FAILED');
    expect(run.error).toBe('Missing required outputs: out.md');
    expect(readState(file).artifacts).toEqual([]);
  });

  it('requiredOutputs present (relative to the state folder, not the cwd): DONE and listed in artifacts', async () => {
    const dir = folder();
    const state = legacyState(TWO_STEPS);
    state.plan.steps['step-1']!.requiredOutputs = ['out.md'];
    state.plan.steps['step-2']!.requiredOutputs = ['reports/final.md'];
    const file = writeState(dir, state);
    const env = {
      STEP_AGENT_CMD: legacyAgent('agent-write-outputs'),
      WRITE_OUTPUTS: 'out.md,reports/final.md',
    };
    // baton runs from another folder: the outputs are looked up beside the state file.
    expectExit(await runLegacy('check', file, env, { cwd: folder() }), 0);
    const after = readState(file);
    expect(statuses(after)).toEqual({ 'step-1': 'DONE', 'step-2': 'DONE' });
    expect(after.artifacts).toEqual(['out.md', 'reports/final.md']);
    expect(existsSync(join(dir, 'reports', 'final.md'))).toBe(true);
  });

  it('requiredOutputs present before the step runs: echo is enough', async () => {
    const dir = folder();
    const state = legacyState(['step-1']);
    state.plan.steps['step-1']!.requiredOutputs = ['artifacts/report.md'];
    const file = writeState(dir, state);
    mkdirSync(join(dir, 'artifacts'));
    writeFileSync(join(dir, 'artifacts', 'report.md'), 'done');
    await runLegacy('step', file, echo);
    expect(readState(file).stepRuns['step-1']!.status).toBe('DONE');
    expect(readState(file).artifacts).toEqual(['artifacts/report.md']);
  });

  it('requiredOutputs outside the state folder count as missing, even when the file exists', async () => {
    const outer = folder();
    const dir = join(outer, 'work');
    mkdirSync(dir);
    writeFileSync(join(outer, 'escape.md'), 'outside');
    symlinkSync(join(outer, 'escape.md'), join(dir, 'link.md'));
    for (const rel of ['../escape.md', join(outer, 'escape.md'), 'link.md']) {
      const state = legacyState(['step-1']);
      state.plan.steps['step-1']!.requiredOutputs = [rel];
      const file = writeState(dir, state);
      await runLegacy('step', file, echo);
      const after = readState(file);
      expect(after.stepRuns['step-1'], rel).toMatchObject({
        status: 'FAILED',
        error: `Missing required outputs: ${rel}`,
      });
      expect(after.artifacts, rel).toEqual([]);
    }
  });

  it.each([
    ['bash -c', /bash/],
    ['sh', /shell/],
    ['node -e', /-e/],
    ['echo -c', /-c/],
  ])('STEP_AGENT_CMD="%s": exit 2, the reason on stderr, the file unchanged', async (command, reason) => {
    const dir = folder();
    const file = writeState(dir, legacyState(TWO_STEPS));
    const before = readFileSync(file);
    for (const verb of ['check', 'step'] as const) {
      const result = expectExit(await runLegacy(verb, file, { STEP_AGENT_CMD: command }), 2);
      expect(result.stderr).toMatch(/^baton: /);
      expect(result.stderr).toMatch(reason);
      expect(result.stdout).toBe('');
    }
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });
});

describe('stepDelayMinutes: a durable wait, never a sleep', () => {
  // 0.025 minutes = 1.5 s: long enough for the "early" check to land inside the delay.
  const DELAY_MS = 1500;

  it('the step after a DONE step waits; check returns at once and a later check runs it', async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(TWO_STEPS, { stepDelayMinutes: DELAY_MS / 60_000 }));
    const first = expectExit(await runLegacy('check', file, echo, { json: true }), 0);
    const report = reportOf(first);
    expect(report).toMatchObject({ outcome: 'waiting', stepsRun: 1 });
    let state = readState(file);
    expect(statuses(state)).toEqual({ 'step-1': 'DONE', 'step-2': 'PENDING' });
    const doneAt = Date.parse(state.stepRuns['step-1']!.lastRunIso!);
    expect(Date.parse(report.waitingUntil!)).toBe(doneAt + DELAY_MS);

    // Still inside the delay: nothing runs.
    const early = reportOf(expectExit(await runLegacy('check', file, echo, { json: true }), 0));
    if (Date.now() < doneAt + DELAY_MS - 50) {
      expect(early).toMatchObject({ outcome: 'waiting', stepsRun: 0 });
      expect(statuses(readState(file))['step-2']).toBe('PENDING');
    }

    await sleep(Math.max(0, doneAt + DELAY_MS - Date.now() + 20));
    const late = reportOf(expectExit(await runLegacy('check', file, echo, { json: true }), 0));
    // On a slow machine the "early" check may already have been past the delay: then it ran step-2.
    expect(early.stepsRun + late.stepsRun).toBe(1);
    state = readState(file);
    expect(statuses(state)).toEqual({ 'step-1': 'DONE', 'step-2': 'DONE' });
    expect(Date.parse(state.stepRuns['step-2']!.lastRunIso!)).toBeGreaterThanOrEqual(doneAt + DELAY_MS);
  });

  it('a retry waits the delay after the failed run', async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(['step-1'], { stepDelayMinutes: DELAY_MS / 60_000 }));
    const env = { STEP_AGENT_CMD: 'false', STEP_MAX_RETRIES: '2' };
    const first = expectExit(await runLegacy('check', file, env, { json: true }), 0);
    expect(reportOf(first)).toMatchObject({ outcome: 'waiting', stepsRun: 1 });
    const failedAt = Date.parse(readState(file).stepRuns['step-1']!.lastRunIso!);
    expect(Date.parse(reportOf(first).waitingUntil!)).toBe(failedAt + DELAY_MS);
    expect(readState(file).stepRuns['step-1']).toMatchObject({ status: 'FAILED', tries: 1 });

    await sleep(Math.max(0, failedAt + DELAY_MS - Date.now() + 20));
    const second = expectExit(await runLegacy('check', file, env, { json: true }), 0);
    expect(reportOf(second)).toMatchObject({ outcome: 'blocked', stepsRun: 1, blockers: ['step-1'] });
    expect(readState(file).stepRuns['step-1']).toMatchObject({ status: 'FAILED', tries: 2 });
  });

  it('a two-minute delay: the check does not sleep', async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(TWO_STEPS, { stepDelayMinutes: 2 }));
    // A check that slept the two minutes would outlive runBaton's 60 s and fail.
    const result = expectExit(await runLegacy('check', file, echo, { json: true }), 0);
    expect(reportOf(result).outcome).toBe('waiting');
  });
});

describe('beyond the skill', () => {
  it('the full agent output is in the log named by stepRuns[id].log; error keeps at most 500 chars', async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(['step-1']));
    await runLegacy('step', file, { STEP_AGENT_CMD: legacyAgent('agent-fail-loud') }, { args: ['--one'] });
    const run = readState(file).stepRuns['step-1']!;
    expect(run.status).toBe('FAILED');
    expect(run.log).toBe(join('state.json.baton', 'logs', 'step-1.try-1.log'));
    const log = readFileSync(join(dir, run.log!), 'utf8');
    expect(log.length).toBeGreaterThan(100 * 1024);
    expect(log).toContain('loud stdout');
    expect(log).toContain('LOUD-FIRST first line of stderr');
    expect(log).toContain('LOUD-LAST final reason');
    expect(run.error!.length).toBeGreaterThan(0);
    expect(run.error!.length).toBeLessThanOrEqual(500);
    // The 500 chars are a useful end of stderr: its start (the skill kept stderr[:500]) or its end
    // (where the final message is), not an arbitrary slice from the middle.
    const stderrText = log.slice(log.indexOf('LOUD-FIRST')).trim();
    expect([stderrText.slice(0, 500), stderrText.slice(-500)]).toContain(run.error);
  });

  it('the state file is 0600 after a check', async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(TWO_STEPS));
    chmodSync(file, 0o644);
    expectExit(await runLegacy('check', file, echo), 0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('unknown fields (top level, plan, step definitions, stepRuns) survive a check', async () => {
    const dir = folder();
    const state = legacyState(TWO_STEPS, {
      'x-owner': { name: 'alice', tags: ['a', 1, null] },
      schemaVersion: 7,
      stepRuns: { 'step-1': { status: 'PENDING', tries: 0, note: 'keep me', meta: { n: 1 } } },
    });
    (state.plan as Record<string, unknown>).version = 'v2';
    (state.plan.steps['step-2'] as Record<string, unknown>).owner = 'bob';
    const file = writeState(dir, state);
    expectExit(await runLegacy('check', file, echo), 0);
    const after = readState(file);
    expect(after['x-owner']).toEqual({ name: 'alice', tags: ['a', 1, null] });
    expect(after.schemaVersion).toBe(7);
    expect((after.plan as Record<string, unknown>).version).toBe('v2');
    expect(after.plan.steps['step-2']).toMatchObject({ owner: 'bob' });
    expect(after.stepRuns['step-1']).toMatchObject({ status: 'DONE', note: 'keep me', meta: { n: 1 } });
    expectExit(await runLegacy('check', file, echo), 0);
    const finished = readState(file);
    expect(finished.status).toBe('DONE');
    expect(finished['x-owner']).toEqual({ name: 'alice', tags: ['a', 1, null] });
    expect(finished.stepRuns['step-1']).toMatchObject({ note: 'keep me' });
  });

  it('blockers never holds the same entry twice after 10 checks', async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(TWO_STEPS));
    const env = { STEP_AGENT_CMD: 'false', STEP_MAX_RETRIES: '1' };
    for (let i = 0; i < 10; i++) {
      const report = reportOf(expectExit(await runLegacy('check', file, env, { json: true }), 0));
      expect(report).toMatchObject({ outcome: 'blocked', stepsRun: i === 0 ? 1 : 0, blockers: ['step-1'] });
    }
    const state = readState(file);
    expect(state.blockers).toEqual(['step-1']);
    expect(state.stepRuns['step-1']).toMatchObject({ status: 'FAILED', tries: 1 });
    expect(state.stepRuns['step-2']).toBeUndefined();
  });

  it('a temporary file left by a check killed mid-write is removed by the next check, and a DONE file is not rewritten', async () => {
    const dir = folder();
    const file = writeState(dir, legacyState(TWO_STEPS));
    const torn = join(dir, '.state.json.4242.tmp');
    writeFileSync(torn, '{"plan": {"ste');
    expectExit(await runLegacy('check', file, echo), 0);
    expect(existsSync(torn)).toBe(false);
    expectExit(await runLegacy('check', file, echo), 0);
    expect(readState(file).status).toBe('DONE');
    const finished = readFileSync(file);
    expectExit(await runLegacy('check', file, echo), 0);
    expect(readFileSync(file).equals(finished)).toBe(true);
  });

  it('baton step --one runs exactly one step per call', async () => {
    const dir = folder();
    const countFile = join(dir, 'count.txt');
    const file = writeState(dir, legacyState(stepIds(3)));
    const env = { STEP_AGENT_CMD: legacyAgent('agent-count'), COUNT_FILE: countFile };
    for (let call = 1; call <= 3; call++) {
      const report = reportOf(
        expectExit(await runLegacy('step', file, env, { json: true, args: ['--one'] }), 0),
      );
      expect(report.stepsRun).toBe(1);
      expect(readCounts(countFile).map((line) => line.step)).toEqual(stepIds(call));
      const state = readState(file);
      expect(Object.values(statuses(state)).filter((s) => s === 'DONE')).toHaveLength(call);
      expect(state.status).toBe('IN_PROGRESS');
    }
    // A failing step: one try per call too.
    const failing = writeState(folder(), legacyState(stepIds(2)));
    expectExit(await runLegacy('step', failing, { STEP_AGENT_CMD: 'false' }, { args: ['--one'] }), 1);
    expect(readState(failing).stepRuns['step-1']).toMatchObject({ status: 'FAILED', tries: 1 });
  });

  it('baton import then baton check finishes the remaining steps only; the state file stays byte-for-byte', async () => {
    const dir = folder();
    const home = folder();
    const countFile = join(dir, 'count.txt');
    const ids = stepIds(4);
    const file = writeState(
      dir,
      legacyState(ids, {
        currentStep: 2,
        stepRuns: {
          'step-1': { status: 'DONE', tries: 1, lastRunIso: '2025-01-01T00:00:00Z' },
          'step-2': { status: 'DONE', tries: 2, lastRunIso: '2025-01-01T00:01:00Z' },
        },
      }),
    );
    const before = readFileSync(file);
    const env = { STEP_AGENT_CMD: legacyAgent('agent-count'), COUNT_FILE: countFile };
    expectExit(await runBaton(['import', file, '--id', 'imported-1'], { home, env }), 0);
    expectExit(await runBaton(['check'], { home, env }), 0);
    const run = await runStatus(home, 'imported-1');
    expect(run.status).toBe('succeeded');
    expect(Object.fromEntries(run.steps.map((s) => [s.stepId, s.status]))).toEqual({
      'step-1': 'succeeded',
      'step-2': 'succeeded',
      'step-3': 'succeeded',
      'step-4': 'succeeded',
    });
    const counts = countByStep(readCounts(countFile));
    expect([...counts.entries()].sort()).toEqual([
      ['imported-1 step-3', 1],
      ['imported-1 step-4', 1],
    ]);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('baton import of the same file twice finds the first run; a changed file or --new makes another', async () => {
    const dir = folder();
    const home = folder();
    const file = writeState(dir, legacyState(stepIds(2)));
    const env = { STEP_AGENT_CMD: legacyAgent('agent-count'), COUNT_FILE: join(dir, 'count.txt') };
    const first = JSON.parse(expectExit(await runBaton(['import', file, '--json'], { home, env }), 0).stdout);
    expect(first.created).toBe(true);
    const again = expectExit(await runBaton(['import', file], { home, env }), 0);
    expect(again.stdout).toContain(`already imported as run ${first.id} (same file, same content`);
    // Through another path to the same file (a symlink) it is still the same file.
    const link = join(folder(), 'state-link.json');
    symlinkSync(file, link);
    const viaLink = JSON.parse(
      expectExit(await runBaton(['import', link, '--json'], { home, env }), 0).stdout,
    );
    expect(viaLink).toMatchObject({ id: first.id, created: false });
    const forced = JSON.parse(
      expectExit(await runBaton(['import', file, '--new', '--json'], { home, env }), 0).stdout,
    );
    expect(forced.created).toBe(true);
    expect(forced.id).not.toBe(first.id);
    const edited = JSON.parse(readFileSync(file, 'utf8'));
    edited.plan.steps['step-1'].instruction = 'do step-1 differently';
    writeFileSync(file, JSON.stringify(edited));
    const changed = JSON.parse(
      expectExit(await runBaton(['import', file, '--json'], { home, env }), 0).stdout,
    );
    expect(changed.created).toBe(true);
    const runs = JSON.parse(expectExit(await runBaton(['status', '--json'], { home }), 0).stdout);
    expect(runs).toHaveLength(3);
  });
});
