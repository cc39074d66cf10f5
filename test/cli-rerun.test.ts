import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentCommand,
  batonJson,
  expectExit,
  expectRefused,
  readCounts,
  removeTempDirs,
  repoRoot,
  runBaton,
  runStatus,
  spawnBaton,
  stopProcesses,
  timeline,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir, stepOf } from './helpers/plans.js';

/**
 * `baton rerun` and `baton fork` end to end: real `baton` processes, a fake agent that appends
 * `<run> <step> <attempt> <pid>` to a ledger for every time it runs (agent-count).
 */

afterEach(async () => {
  await stopProcesses('SIGKILL');
  removeTempDirs();
});

/** The daily report: fetch, analyze, report, send; `notes` beside it. */
function dailyPlan(reportInstruction = 'write the report from the analysis', sendSideEffect = 'none') {
  return fixturePlan(
    [
      { id: 'fetch', instruction: 'fetch the competitors' },
      { id: 'analyze', instruction: 'analyze them', dependsOn: ['fetch'] },
      { id: 'report', instruction: reportInstruction, dependsOn: ['analyze'] },
      { id: 'send', instruction: 'send the report', dependsOn: ['report'], sideEffect: sendSideEffect },
      { id: 'notes', instruction: 'keep notes' },
    ],
    { name: 'daily-report' },
    'agent-count',
  );
}

async function finishedRun(id = 'daily', sendSideEffect = 'none') {
  const { dir, home } = planDir('baton-rerun-');
  const ledger = join(dir, 'ledger');
  const env = { COUNT_FILE: ledger };
  const plan = writePlan(dir, dailyPlan(undefined, sendSideEffect));
  expectExit(await runBaton(['run', plan, '--id', id], { home, env }), 0);
  const ran = () => readCounts(ledger).map((line) => `${line.run} ${line.step} ${line.attempt}`);
  expect(ran()).toHaveLength(5);
  return { dir, home, env, plan, ran };
}

describe('baton rerun', () => {
  it('runs a middle step and exactly its descendants again, attempts continuing, asked by whom', async () => {
    const { home, env, ran } = await finishedRun();
    const rerun = expectExit(
      await runBaton(['rerun', 'daily', '--from', 'analyze', '--by', 'ana'], { home, env }),
      0,
    );
    expect(rerun.stdout).toContain('3 step(s) will run again: analyze, report, send');
    // Nothing runs until a check drives the run.
    expect(ran()).toHaveLength(5);
    expectExit(await runBaton(['check'], { home, env }), 0);
    expect(ran().slice(5).sort()).toEqual(['daily analyze 2', 'daily report 2', 'daily send 2']);
    const run = await runStatus(home, 'daily');
    expect(run.status).toBe('succeeded');
    expect(stepOf(run, 'fetch').attempt).toBe(1);
    const events = await timeline(home, 'daily');
    expect(events.find((e) => e.type === 'run.rerun_requested')).toMatchObject({
      stepId: 'analyze',
      by: 'ana',
      steps: 3,
    });
    const text = await runBaton(['timeline', 'daily'], { home });
    expect(text.stdout).toContain('rerun from analyze (3 step(s)) asked by ana');
  });

  it('--keep send: with send unsafe, analyze and report run again, send is not run, and the answer says so', async () => {
    const { home, env, ran } = await finishedRun('daily-keep', 'unsafe');
    const before = (await timeline(home, 'daily-keep')).length;
    // Without it the rerun is refused, saying how to keep send.
    expectRefused(
      await runBaton(['rerun', 'daily-keep', '--from', 'analyze'], { home, env }),
      'step send is unsafe',
      '--keep send',
    );
    expect((await timeline(home, 'daily-keep')).length).toBe(before);
    const rerun = expectExit(
      await runBaton(['rerun', 'daily-keep', '--from', 'analyze', '--keep', 'send'], { home, env }),
      0,
    );
    expect(rerun.stdout).toContain('2 step(s) will run again: analyze, report\n');
    expect(rerun.stdout).toContain('kept as they are, not run: send\n');
    expect(rerun.stdout).toContain('side effects: none of the steps that run again has any\n');
    expectExit(await runBaton(['check'], { home, env }), 0);
    expect(ran().slice(5).sort()).toEqual(['daily-keep analyze 2', 'daily-keep report 2']);
    const run = await runStatus(home, 'daily-keep');
    expect(run.status).toBe('succeeded');
    expect(stepOf(run, 'send').attempt).toBe(1);
    expect((await timeline(home, 'daily-keep')).find((e) => e.type === 'run.rerun_requested')).toMatchObject({
      kept: ['send'],
      steps: 2,
    });
    expect((await runBaton(['timeline', 'daily-keep'], { home })).stdout).toContain(
      'rerun from analyze (2 step(s)) asked by',
    );
    expect((await runBaton(['timeline', 'daily-keep'], { home })).stdout).toContain('; kept: send');
    // --keep-effects keeps it without naming it; --json carries the same lists.
    const json = await batonJson<{ rerun: { steps: string[]; kept: string[]; effects: string[] } }>(
      ['rerun', 'daily-keep', '--from', 'report', '--keep-effects'],
      { home, env },
    );
    expect(json.rerun).toMatchObject({ steps: ['report'], kept: ['send'], effects: [] });
    // A step that is not after --from cannot be kept: exit 2, naming it.
    expectRefused(
      await runBaton(['rerun', 'daily-keep', '--from', 'report', '--keep', 'notes'], { home, env }),
      '--keep notes: it does not run again in a rerun from report',
    );
  });

  it('names the side-effecting steps that run again', async () => {
    const { home, env } = await finishedRun('daily-idem', 'idempotent');
    const rerun = expectExit(await runBaton(['rerun', 'daily-idem', '--from', 'report'], { home, env }), 0);
    expect(rerun.stdout).toContain(
      'side effects: send will run again (effects they recorded with ctx.effect are not repeated)',
    );
  });

  it('--only runs the step alone; status marks the steps after it stale until they run again', async () => {
    const { home, env, ran } = await finishedRun();
    expectExit(await runBaton(['rerun', 'daily', '--from', 'analyze', '--only'], { home, env }), 0);
    expectExit(await runBaton(['check'], { home, env }), 0);
    expect(ran().slice(5)).toEqual(['daily analyze 2']);
    const status = await runBaton(['status', 'daily'], { home });
    expect(status.stdout).toMatch(/report\s+succeeded \(stale\)/);
    expect(status.stdout).toContain('stale: report, send');
    expect(status.stdout).toContain('baton rerun daily --from report');
    expect((await batonJson<{ stale: string[] }>(['status', 'daily'], { home })).stale).toEqual([
      'report',
      'send',
    ]);
    expectExit(await runBaton(['rerun', 'daily', '--from', 'report'], { home, env }), 0);
    expectExit(await runBaton(['check'], { home, env }), 0);
    expect((await batonJson<{ stale: string[] }>(['status', 'daily'], { home })).stale).toEqual([]);
  });

  it('refuses an unknown run or step and a cancelled run (saying to fork), exit 2, storing nothing', async () => {
    const { home, env } = await finishedRun();
    const before = (await timeline(home, 'daily')).length;
    expectRefused(await runBaton(['rerun', 'nope', '--from', 'analyze'], { home }), 'no run with id "nope"');
    expectRefused(await runBaton(['rerun', 'daily', '--from', 'analyse'], { home }), '"analyse"', 'analyze');
    expectRefused(await runBaton(['fork', 'nope', '--from', 'analyze'], { home }), 'no run with id "nope"');
    expectRefused(await runBaton(['fork', 'daily', '--from', 'analyse'], { home }), '"analyse"');
    expect((await timeline(home, 'daily')).length).toBe(before);
    expectExit(await runBaton(['rerun', 'daily', '--from', 'send', '--only'], { home, env }), 0);
    expectExit(await runBaton(['cancel', 'daily'], { home }), 0);
    const cancelled = (await timeline(home, 'daily')).length;
    expectRefused(
      await runBaton(['rerun', 'daily', '--from', 'fetch'], { home }),
      'run daily was cancelled',
      'baton fork daily --from fetch',
    );
    expect((await timeline(home, 'daily')).length).toBe(cancelled);
    const runs = await batonJson<unknown[]>(['status'], { home });
    expect(runs).toHaveLength(1);
  });

  it('stops a running step first: its rerun starts only after the old agent process was stopped', async () => {
    const { dir, home } = planDir('baton-rerun-running-');
    const spans = join(dir, 'spans');
    const plan = writePlan(
      dir,
      fixturePlan(
        [
          { id: 'fetch', instruction: 'fetch' },
          { id: 'analyze', instruction: 'analyze for a long time', dependsOn: ['fetch'] },
        ],
        { name: 'slow' },
        'agent-span',
      ),
    );
    const env = { SPAN_FILE: spans, SPAN_MS: '600000', SPAN_STEP: 'analyze' };
    expectExit(await runBaton(['run', plan, '--id', 'slow', '--detach'], { home, env }), 0);
    spawnBaton(['worker', '--lease', '3s', '--quiet'], { home, env });
    const lines = () => (existsSync(spans) ? readFileSync(spans, 'utf8').trim().split('\n') : []);
    const until = async (what: string) => {
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
        if (lines().some((line) => line.startsWith(what))) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`no "${what}" in ${spans}: ${lines().join(' | ')}`);
    };
    await until('start analyze 1');
    expectExit(await runBaton(['rerun', 'slow', '--from', 'fetch'], { home, env }), 0);
    await until('start analyze 2');
    const order = lines().map((line) => line.split(' ').slice(0, 3).join(' '));
    // The old analyze was stopped (never finished), and only then did the new one start.
    expect(order).not.toContain('end analyze 1');
    expect(order.indexOf('stop analyze 1')).toBeGreaterThan(-1);
    expect(order.indexOf('stop analyze 1')).toBeLessThan(order.indexOf('start analyze 2'));
    expect(order.indexOf('end fetch 2')).toBeLessThan(order.indexOf('start analyze 2'));
  });
});

describe('baton fork', () => {
  it('runs only the steps after the fork point with an edited downstream instruction, in a copy of the workspace', async () => {
    const { dir, home, env, ran } = await finishedRun();
    writeFileSync(join(dir, 'notes.md'), 'left by the first run\n');
    const edited = writePlan(dir, dailyPlan('write the report, shorter'), { name: 'daily-v2.yaml' });
    const forked = expectExit(
      await runBaton(['fork', 'daily', '--from', 'report', '--plan', edited, '--id', 'daily-v2'], {
        home,
        env,
      }),
      0,
    );
    expect(forked.stdout).toContain('kept from daily: fetch, analyze, notes');
    expectExit(await runBaton(['check'], { home, env }), 0);
    expect(ran().slice(5).sort()).toEqual(['daily-v2 report 1', 'daily-v2 send 1']);
    const run = await runStatus(home, 'daily-v2');
    expect(run.status).toBe('succeeded');
    // A fresh folder of its own, holding what the old run's workspace held (not the Baton home).
    expect(run.workspace).toBe(join(home, 'workspaces', 'daily-v2'));
    expect(readFileSync(join(run.workspace, 'notes.md'), 'utf8')).toBe('left by the first run\n');
    expect(existsSync(join(run.workspace, 'home'))).toBe(false);
    const status = await runBaton(['status', 'daily-v2'], { home });
    expect(status.stdout).toContain('forked from run daily at step report');
    const diff = await runBaton(['diff', 'daily', 'daily-v2'], { home });
    expect(diff.stdout).toContain('daily-v2 was forked from run daily at step report');
    expect(diff.stdout).toMatch(/fetch\s+succeeded\s+succeeded\s+same/);
    expect((await timeline(home, 'daily-v2'))[0]).toMatchObject({
      type: 'run.created',
      forkedFrom: { runId: 'daily', stepId: 'report' },
    });
  });

  it('refuses an edited plan that changed a kept step, naming it, and stores nothing', async () => {
    const { dir, home } = await finishedRun();
    const plan = dailyPlan();
    plan.steps[1] = { ...plan.steps[1]!, instruction: 'analyze them more deeply' };
    const edited = writePlan(dir, plan, { name: 'daily-v2.yaml' });
    expectRefused(
      await runBaton(['fork', 'daily', '--from', 'report', '--plan', edited, '--id', 'v2'], { home }),
      'steps.analyze changed',
      'baton fork daily --from analyze',
    );
    expect(await batonJson<unknown[]>(['status'], { home })).toHaveLength(1);
    expect(existsSync(join(home, 'workspaces', 'v2'))).toBe(false);
  });
});

describe('the rerun example of docs/operating.md', () => {
  it('runs as written: a rerun of analyze brings a fresh report, fetch and notes run once', async () => {
    const page = readFileSync(join(repoRoot, 'docs', 'operating.md'), 'utf8');
    const section = page.split('## Doing part of a run again: rerun and fork')[1]!.split('\n## ')[0]!;
    const plan = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
    const commands = /```sh\n([\s\S]*?)```/
      .exec(section)![1]!
      .split('\n')
      .map((line) => line.replace(/#.*$/, '').trim())
      .filter((line) => line.startsWith('baton '));
    expect(commands[1]).toBe('baton rerun daily-20261012 --from analyze --by ana');
    const { dir, home } = planDir('baton-rerun-doc-');
    writeFileSync(join(dir, 'daily-report.yaml'), plan);
    const ledger = join(dir, 'ledger');
    const env = { COUNT_FILE: ledger, BATON_AGENT_CMD: JSON.stringify(agentCommand('agent-count')) };
    for (const command of commands)
      expectExit(await runBaton(command.split(' ').slice(1), { home, env, cwd: dir }), 0);
    const ran = readCounts(ledger).map((line) => `${line.step} ${line.attempt}`);
    expect(ran.sort()).toEqual(['analyze 1', 'analyze 2', 'fetch 1', 'notes 1', 'report 1', 'report 2']);
  });

  it('takes new inputs over the old ones, and refuses the old workspace while the old run is unfinished', async () => {
    const { dir, home } = planDir('baton-fork-inputs-');
    const plan = writePlan(
      dir,
      fixturePlan(
        [
          { id: 'fetch', instruction: 'fetch {{inputs.region}}' },
          { id: 'report', instruction: 'report on {{inputs.region}}', dependsOn: ['fetch'] },
        ],
        { name: 'regional', inputs: { region: {}, lang: { default: 'en' } } },
      ),
    );
    expectExit(await runBaton(['run', plan, '--id', 'eu', '--detach', '-i', 'region=eu'], { home }), 0);
    expectRefused(
      await runBaton(['fork', 'eu', '--from', 'fetch', '--workspace', dir], { home }),
      `run eu works there and is running`,
    );
    expectRefused(
      await runBaton(['fork', 'eu', '--from', 'fetch', '-i', 'zone=x'], { home }),
      'input "zone"',
    );
    expect(await batonJson<unknown[]>(['status'], { home })).toHaveLength(1);
    expectExit(
      await runBaton(['fork', 'eu', '--from', 'fetch', '--id', 'us', '-i', 'region=us'], { home }),
      0,
    );
    const run = await batonJson<{ inputs: Record<string, string> }>(['status', 'us'], { home });
    expect(run.inputs).toEqual({ region: 'us', lang: 'en' });
  });
});
