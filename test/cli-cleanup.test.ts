/**
 * Cleanup that always runs, with real workers and agents: a run `branch -> pr` (each with
 * `compensate:`) and a `finally:` step, cancelled with --compensate while `pr` runs. `pr` never
 * completed, so it is not compensated; `branch` is, exactly once, even though the worker is
 * SIGKILLed during its compensation; `finally` runs once and reads `{{run.status}}`; the `cancelled`
 * hook is called once, when the cleanup is done.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  agentCommand,
  batonJson,
  expectExit,
  expectRefused,
  fixture,
  isAlive,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  tempDir,
  timeline,
  waitFor,
  writePlan,
} from './helpers/cli.js';

afterAll(async () => {
  await stopProcesses();
  removeTempDirs();
});

/** A model step: a step with no agent of its own. */
const MODEL = { provider: 'openai', model: 'gpt-test', prompt: 'hello' };

interface LogLine {
  what: 'begin' | 'end';
  step: string;
  attempt: number;
  pid: number;
}

function readLog(file: string): LogLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [what, step, attempt, pid] = line.split(' ');
      return { what: what as LogLine['what'], step: step!, attempt: Number(attempt), pid: Number(pid) };
    });
}

const lines = (log: readonly LogLine[], what: LogLine['what'], step: string) =>
  log.filter((line) => line.what === what && line.step === step);

interface CleanupRun {
  status: string;
  cleanup?: { ending: string; done: number; total: number };
  steps: { stepId: string; status: string; resultJson: string | null }[];
}

describe('cleanup: compensate and finally', () => {
  it('compensates what completed exactly once across a SIGKILL, runs finally once, then calls the cancelled hook once', async () => {
    const dir = tempDir('baton-cleanup-');
    const home = join(dir, 'home');
    const gates = join(dir, 'gates');
    mkdirSync(gates);
    const logFile = join(dir, 'agents.log');
    const hookFile = join(dir, 'hooks.jsonl');
    const open = (step: string) => writeFileSync(join(gates, step.replaceAll(':', '_')), '');
    const env = { LOG_FILE: logFile, GATE_DIR: gates, HOOK_FILE: hookFile };
    const file = writePlan(dir, {
      name: 'release',
      defaults: {
        agent: { command: agentCommand('agent-step-gate') },
        retry: { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 50 },
      },
      hooks: [{ on: ['cancelled'], command: [process.execPath, fixture('hook-record')] }],
      steps: [
        {
          id: 'branch',
          instruction: 'create branch',
          compensate: 'delete the branch {{steps.branch.summary}}',
        },
        { id: 'pr', instruction: 'open the PR', dependsOn: ['branch'], compensate: 'close the PR' },
      ],
      finally: [{ id: 'report', instruction: 'report: the run ended {{run.status}}' }],
    });
    expectExit(await runBaton(['run', file, '--id', 'rel', '--detach'], { home, env }), 0);
    open('branch');
    const first = spawnBaton(['worker', '--lease', '1s'], { home, env });
    await waitFor(() => lines(readLog(logFile), 'begin', 'pr').length > 0, 60_000, 'pr to start');

    const cancelled = expectExit(await runBaton(['cancel', 'rel', '--compensate'], { home, env }), 0);
    expect(cancelled.stdout).toContain('its cleanup (compensate:, finally:) runs first');
    // The worker stops pr's agent; branch's compensation starts.
    const undo = await waitFor(
      () => lines(readLog(logFile), 'begin', 'branch:compensate')[0],
      60_000,
      'the compensation of branch to start',
    );
    const during = await batonJson<CleanupRun>(['status', 'rel'], { home });
    expect(during.status).toBe('running');
    expect(during.cleanup).toEqual({ ending: 'cancelled', done: 0, total: 2 });
    expect(readFileSync(hookFile, { encoding: 'utf8', flag: 'a+' })).toBe('');

    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const second = spawnBaton(['worker', '--lease', '1s'], { home, env });
    // The new worker stops the dead one's agent, then runs the compensation again.
    await waitFor(() => !isAlive(undo.pid), 30_000, `orphan ${undo.pid} to be stopped`);
    await waitFor(
      () => lines(readLog(logFile), 'begin', 'branch:compensate').some((line) => line.attempt === 2),
      60_000,
      'the compensation to run again',
    );
    open('branch:compensate');
    open('report');
    const done = await waitFor(
      async () => {
        const run = await batonJson<CleanupRun>(['status', 'rel'], { home }, [0, 1]);
        return run.status === 'cancelled' ? run : undefined;
      },
      60_000,
      'the run to be cancelled after its cleanup',
    );
    second.child.kill('SIGTERM');
    await second.exited;

    expect(done.cleanup).toEqual({ ending: 'cancelled', done: 2, total: 2 });
    expect(done.steps.map((step) => [step.stepId, step.status])).toEqual([
      ['branch', 'succeeded'],
      ['pr', 'cancelled'],
      ['branch:compensate', 'succeeded'],
      ['report', 'succeeded'],
    ]);
    const log = readLog(logFile);
    // pr never completed: nothing undoes it. branch's compensation completed once, report ran once.
    expect(log.filter((line) => line.step === 'pr:compensate')).toEqual([]);
    expect(lines(log, 'end', 'pr')).toEqual([]);
    expect(lines(log, 'end', 'branch:compensate').map((line) => line.attempt)).toEqual([2]);
    expect(lines(log, 'begin', 'report')).toHaveLength(1);
    expect(lines(log, 'end', 'report')).toHaveLength(1);
    const report = done.steps.find((step) => step.stepId === 'report')!;
    expect(JSON.parse(report.resultJson!).summary).toContain('report: the run ended cancelled');
    const undone = done.steps.find((step) => step.stepId === 'branch:compensate')!;
    expect(JSON.parse(undone.resultJson!).summary).toContain('delete the branch create branch');

    const hooks = await waitFor(
      () => {
        const calls = readFileSync(hookFile, { encoding: 'utf8', flag: 'a+' }).trim();
        return calls === '' ? undefined : calls.split('\n');
      },
      30_000,
      'the cancelled hook',
    );
    expect(hooks).toHaveLength(1);
    expect(JSON.parse(hooks[0]!)).toMatchObject({ event: { type: 'run.cancelled' } });
    const events = await timeline(home, 'rel');
    expect(events.filter((event) => event.type === 'run.cancelled')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'run.cleanup_started')).toHaveLength(1);

    const text = await runBaton(['status', 'rel'], { home });
    expect(text.stdout).toContain('cancelled (cleanup 2/2 done)');
  }, 240_000);

  it('refuses at start cleanup that could never run: a compensate or finally instruction with no agent', async () => {
    const dir = tempDir('baton-cleanup-refused-');
    const home = join(dir, 'home');
    const compensate = writePlan(
      dir,
      { name: 'c', steps: [{ id: 'a', model: MODEL, compensate: 'undo a' }] },
      { name: 'c.yaml' },
    );
    expectRefused(
      await runBaton(['run', compensate], { home, env: { BATON_AGENT_CMD: '' } }),
      'step "a" has a compensate instruction but no agent command to run it',
    );
    const final = writePlan(
      dir,
      { name: 'f', steps: [{ id: 'a', model: MODEL }], finally: [{ id: 'tell', instruction: 'tell' }] },
      { name: 'f.yaml' },
    );
    expectRefused(
      await runBaton(['run', final], { home, env: { BATON_AGENT_CMD: '' } }),
      'step "tell" has no agent command',
    );
  }, 60_000);

  it('onFailure: compensate gives a run up when a step is blocked: compensations, finally, then failed; a run that succeeds runs finally too', async () => {
    const dir = tempDir('baton-cleanup-fail-');
    const home = join(dir, 'home');
    const gates = join(dir, 'gates');
    mkdirSync(gates);
    for (const step of ['fetch', 'fetch_compensate', 'report']) writeFileSync(join(gates, step), '');
    const logFile = join(dir, 'agents.log');
    const hookFile = join(dir, 'hooks.jsonl');
    const env = { LOG_FILE: logFile, GATE_DIR: gates, HOOK_FILE: hookFile };
    const plan = (publish: string[]) => ({
      name: 'publish',
      defaults: { agent: { command: agentCommand('agent-step-gate') }, retry: { maxAttempts: 1 } },
      onFailure: 'compensate',
      hooks: [{ on: ['failed', 'succeeded'], command: [process.execPath, fixture('hook-record')] }],
      steps: [
        { id: 'fetch', instruction: 'fetch', compensate: 'remove the download' },
        { id: 'publish', dependsOn: ['fetch'], agent: { command: publish }, instruction: 'publish' },
      ],
      finally: [{ id: 'report', instruction: 'ended {{run.status}}' }],
    });
    const failing = writePlan(dir, plan(agentCommand('agent-fail')), { name: 'failing' });
    const failed = await runBaton(['run', failing, '--id', 'f1'], { home, env });
    expect(failed.code).toBe(1);
    const run = await batonJson<CleanupRun>(['status', 'f1'], { home }, 1);
    expect(run.status).toBe('failed');
    expect(run.cleanup).toEqual({ ending: 'failed', done: 2, total: 2 });
    expect(run.steps.map((step) => [step.stepId, step.status])).toEqual([
      ['fetch', 'succeeded'],
      ['publish', 'cancelled'],
      ['fetch:compensate', 'succeeded'],
      ['report', 'succeeded'],
    ]);
    expect(JSON.parse(run.steps[3]!.resultJson!).summary).toContain('ended failed');
    const events = await timeline(home, 'f1');
    const end = events.filter((event) => event.type === 'run.failed');
    expect(end).toHaveLength(1);
    expect(JSON.stringify(end[0])).toContain('step publish');

    const passing = writePlan(dir, plan(agentCommand('agent-step-gate')), { name: 'passing' });
    writeFileSync(join(gates, 'publish'), '');
    expectExit(await runBaton(['run', passing, '--id', 'p1'], { home, env }), 0);
    const ok = await batonJson<CleanupRun>(['status', 'p1'], { home });
    expect(ok.status).toBe('succeeded');
    expect(ok.steps.map((step) => step.stepId)).toEqual(['fetch', 'publish', 'report']);
    expect(JSON.parse(ok.steps[2]!.resultJson!).summary).toContain('ended succeeded');
    const log = readLog(logFile);
    expect(log.filter((line) => line.what === 'end' && line.step === 'report')).toHaveLength(2);
    expect(log.filter((line) => line.step === 'fetch:compensate')).toHaveLength(2);

    const hooks = await waitFor(
      () => {
        const calls = readFileSync(hookFile, { encoding: 'utf8', flag: 'a+' }).trim().split('\n');
        const types = calls.filter(Boolean).map((line) => JSON.parse(line).event.type as string);
        return types.includes('run.failed') && types.includes('run.succeeded') ? types : undefined;
      },
      30_000,
      'the failed and succeeded hooks',
    );
    expect(hooks.filter((type) => type === 'run.failed' || type === 'run.succeeded').sort()).toEqual([
      'run.failed',
      'run.succeeded',
    ]);
  }, 240_000);
});
