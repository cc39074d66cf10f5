/**
 * Shadow runs: steps with a side effect are recorded, not executed (a fixture HTTP server counts
 * what would have been sent), and `baton diff` compares a shadow run with a real one.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import {
  agentCommand,
  batonJson,
  expectExit,
  expectRefused,
  removeTempDirs,
  runBaton,
  runStatus,
  stopProcesses,
  timeline,
  writePlan,
} from './helpers/cli.js';
import { planDir } from './helpers/plans.js';

let server: Server | null = null;
afterEach(async () => {
  await stopProcesses();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = null;
});
afterAll(() => removeTempDirs());

async function effectServer(): Promise<{ url: string; received: string[] }> {
  const received: string[] = [];
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push(body);
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, received };
}

function mailPlan() {
  return {
    name: 'mail',
    inputs: { to: { default: 'team' } },
    defaults: { agent: { command: agentCommand('agent-succeed') } },
    steps: [
      { id: 'draft', instruction: 'draft a note for {{inputs.to}}' },
      {
        id: 'send',
        dependsOn: ['draft'],
        sideEffect: 'unsafe',
        shadowResult: 'would have sent the note',
        instruction: 'send to {{inputs.to}}: {{steps.draft.summary}}',
        agent: { command: agentCommand('agent-http') },
      },
      { id: 'log', dependsOn: ['send'], instruction: 'log {{steps.send.summary}}' },
    ],
  };
}

/** The mail plan with a person's approval before send, and `shadow` as given. */
function gatedPlan(shadow?: unknown) {
  const plan = mailPlan();
  return {
    ...plan,
    ...(shadow === undefined ? {} : { shadow }),
    steps: [
      plan.steps[0]!,
      { id: 'gate', dependsOn: ['draft'], wait: { for: 'approval', prompt: 'Send it?' } },
      { ...plan.steps[1]!, dependsOn: ['gate'] },
      plan.steps[2]!,
    ],
  };
}

describe('shadow runs decide their approvals', () => {
  it('approve (the default): the gate is approved by shadow at once and the run ends without a person', async () => {
    const effects = await effectServer();
    const { dir, home } = planDir();
    const file = writePlan(dir, gatedPlan());
    expectExit(
      await runBaton(['run', file, '--shadow', '--id', 'gated1'], { home, env: { EFFECT_URL: effects.url } }),
      0,
    );
    expect((await runStatus(home, 'gated1')).status).toBe('succeeded');
    expect(effects.received).toEqual([]);
    const events = await timeline(home, 'gated1');
    expect(events.find((e) => e.type === 'step.approved')).toMatchObject({
      stepId: 'gate',
      by: 'shadow',
      comment: 'shadow run (shadow.approvals: approve)',
    });
    expect(events.some((e) => e.type === 'step.waiting')).toBe(false);
    expect(events.find((e) => e.type === 'step.would_execute')).toMatchObject({ stepId: 'send' });
    // The same plan live still asks a person.
    expectExit(
      await runBaton(['run', file, '--detach', '--id', 'live1'], { home, env: { EFFECT_URL: effects.url } }),
      0,
    );
    expectExit(await runBaton(['check'], { home, env: { EFFECT_URL: effects.url } }), 0);
    expect((await runStatus(home, 'live1')).steps.find((st) => st.stepId === 'gate')?.status).toBe('waiting');
  });

  it('reject skips the gate and what follows it; wait asks a person as a live run does', async () => {
    const { dir, home } = planDir();
    const rejecting = writePlan(dir, gatedPlan({ approvals: 'reject' }));
    expectExit(await runBaton(['run', rejecting, '--id', 'rejected1'], { home }), 0);
    const run = await runStatus(home, 'rejected1');
    expect(run.steps.map((s) => [s.stepId, s.status])).toEqual([
      ['draft', 'succeeded'],
      ['gate', 'skipped'],
      ['send', 'skipped'],
      ['log', 'skipped'],
    ]);
    expect((await timeline(home, 'rejected1')).find((e) => e.type === 'step.rejected')).toMatchObject({
      by: 'shadow',
    });
    const waiting = writePlan(dir, { ...gatedPlan({ approvals: 'wait' }), name: 'mail-wait' });
    expectExit(await runBaton(['run', waiting, '--detach', '--id', 'waiting1'], { home }), 0);
    expectExit(await runBaton(['check'], { home }), 0);
    expect((await runStatus(home, 'waiting1')).steps.find((st) => st.stepId === 'gate')?.status).toBe(
      'waiting',
    );
  });
});

describe('shadow schedules', () => {
  it('a --shadow schedule records the send and approves its wait as shadow; update --live makes the next run send', async () => {
    const effects = await effectServer();
    const { dir, home } = planDir();
    const env = { EFFECT_URL: effects.url };
    const file = writePlan(dir, gatedPlan());
    const added = expectExit(
      await runBaton(['schedule', 'add', 'daily', file, '--every', '1h', '--shadow'], { home, env }),
      0,
    );
    expect(added.stdout).toContain(', shadow runs; next:');
    expect((await runBaton(['schedule', 'list'], { home })).stdout).toMatch(
      /daily\s+mail\s+every 1h, skip, shadow/,
    );
    const shadow = await batonJson<{ id: string }>(['schedule', 'trigger', 'daily'], { home, env });
    expectExit(await runBaton(['check'], { home, env }), 0);
    expect((await runStatus(home, shadow.id)).status).toBe('succeeded');
    expect(effects.received).toEqual([]);
    const events = await timeline(home, shadow.id);
    expect(events.find((e) => e.type === 'step.approved')).toMatchObject({ stepId: 'gate', by: 'shadow' });
    expect(events.find((e) => e.type === 'step.would_execute')).toMatchObject({ stepId: 'send' });
    expect((await runBaton(['status', shadow.id], { home })).stdout).toContain('(shadow)');

    // Two weeks later: live from the next run on. It asks a person, then sends.
    const updated = expectExit(await runBaton(['schedule', 'update', 'daily', '--live'], { home, env }), 0);
    expect(updated.stdout).toContain(', live runs; next:');
    const live = await batonJson<{ id: string }>(['schedule', 'trigger', 'daily'], { home, env });
    expectExit(await runBaton(['check'], { home, env }), 0);
    expect((await runStatus(home, live.id)).steps.find((st) => st.stepId === 'gate')?.status).toBe('waiting');
    expectExit(await runBaton(['approve', live.id, 'gate'], { home }), 0);
    expectExit(await runBaton(['check'], { home, env }), 0);
    expect((await runStatus(home, live.id)).status).toBe('succeeded');
    expect(effects.received).toEqual(['send to team: ok: draft a note for team']);
    expectRefused(
      await runBaton(['schedule', 'update', 'daily', '--live', '--shadow'], { home }),
      '--live and --shadow: give one of them',
    );
  });
});

describe('shadow runs', () => {
  it('do not execute steps with a side effect, record what they would do, and let the rest run', async () => {
    const effects = await effectServer();
    const { dir, home } = planDir();
    const file = writePlan(dir, mailPlan());
    expectExit(
      await runBaton(['run', file, '--shadow', '--id', 'shadow1'], {
        home,
        env: { EFFECT_URL: effects.url },
      }),
      0,
    );
    expect(effects.received).toEqual([]);
    const events = await timeline(home, 'shadow1');
    const would = events.find((e) => e.type === 'step.would_execute');
    expect(would).toMatchObject({
      stepId: 'send',
      executor: 'agent',
      inputs: { instruction: 'send to team: ok: draft a note for team' },
      result: 'would have sent the note',
    });
    const logs = await batonJson<{ summary: string }[]>(['logs', 'shadow1', 'log'], { home });
    expect(logs.at(-1)?.summary).toBe('ok: log would have sent the note');

    // The same plan for real: the e-mail goes out once; diff shows where the runs part.
    expectExit(await runBaton(['run', file, '--id', 'real1'], { home, env: { EFFECT_URL: effects.url } }), 0);
    expect(effects.received).toEqual(['send to team: ok: draft a note for team']);
    const diff = expectExit(await runBaton(['diff', 'shadow1', 'real1'], { home }), 1);
    expect(diff.stdout).toMatch(/draft\s+succeeded\s+succeeded\s+same/);
    expect(diff.stdout).toMatch(
      /send\s+succeeded\s+succeeded\s+differs at line 1: would have sent the note \| sent: send to team/,
    );
    const json = await batonJson<{ steps: { stepId: string; same: boolean }[] }>(
      ['diff', 'shadow1', 'real1'],
      { home },
      [1],
    );
    expect(json.steps.map((s) => [s.stepId, s.same])).toEqual([
      ['draft', true],
      ['send', false],
      ['log', false],
    ]);
    expectExit(await runBaton(['diff', 'real1', 'real1'], { home }), 0);
    expect((await runStatus(home, 'real1')).status).toBe('succeeded');
  });

  it('shadow: true in the plan does the same', async () => {
    const effects = await effectServer();
    const { dir, home } = planDir();
    const file = writePlan(dir, { ...mailPlan(), shadow: true });
    expectExit(await runBaton(['run', file, '--id', 's2'], { home, env: { EFFECT_URL: effects.url } }), 0);
    expect(effects.received).toEqual([]);
  });
});

describe('baton diff of a schedule slot', () => {
  it('compares a shadow schedule run with the live run of the same slot, either way round', async () => {
    const effects = await effectServer();
    const { dir, home } = planDir();
    const env = { EFFECT_URL: effects.url };
    const file = writePlan(dir, mailPlan());
    expectExit(await runBaton(['schedule', 'add', 'seed', file, '--every', '1h'], { home }), 0);
    // Two schedules of the plan on one timing, added minutes ago: the next check starts the slot
    // they both missed (catch-up none: only the latest), one live run and one shadow run.
    const store = SqliteStore.open(join(home, 'baton.db'));
    try {
      const { plan, planHash, inputs, workspace } = (await store.getSchedule('seed'))!;
      await store.removeSchedule('seed');
      const rules = (shadow: boolean) => ({
        timing: { cron: '* * * * *', tz: 'UTC' },
        overlap: 'skip' as const,
        catchUpMs: null,
        startAt: null,
        endAt: null,
        shadow,
      });
      const now = Date.now() - 150_000;
      for (const [name, shadow] of [
        ['live', false],
        ['rehearsal', true],
      ] as const)
        await store.addSchedule({ name, plan, planHash, inputs, workspace, rules: rules(shadow), now });
    } finally {
      await store.close();
    }
    expectExit(await runBaton(['check'], { home, env }), 0);
    for (const name of ['live', 'rehearsal'])
      expectExit(await runBaton(['schedule', 'pause', name], { home }), 0);
    const runsOf = async (name: string) =>
      (await batonJson<{ slots: { runId: string | null }[] }>(['schedule', 'show', name], { home })).slots
        .map((slot) => slot.runId)
        .filter((id) => id !== null);
    const [live] = await runsOf('live');
    const [shadow] = await runsOf('rehearsal');
    expect(live && shadow).toBeTruthy();
    expect(effects.received).toHaveLength(1);
    const diff = expectExit(await runBaton(['diff', shadow!], { home }), 1);
    expect(diff.stdout).toContain(`comparing with ${live}, the live run of the same slot`);
    expect(diff.stdout).toContain('(schedule live)');
    expect(diff.stdout).toMatch(/send\s+succeeded\s+succeeded\s+differs at line 1: would have sent the note/);
    expect(diff.stdout).toContain('shadowResult stood in');
    const back = expectExit(await runBaton(['diff', live!], { home }), 1);
    expect(back.stdout).toContain(`comparing with ${shadow}, the shadow run of the same slot`);
    // A run no schedule started has no slot to compare by.
    expectExit(await runBaton(['run', file, '--shadow', '--id', 'by-hand'], { home, env }), 0);
    const refused = expectExit(await runBaton(['diff', 'by-hand'], { home }), 2);
    expect(refused.stderr).toContain('run by-hand was not started by a schedule slot');
  });
});
