/**
 * `baton mcp` translates to the runtime's command layer, so a host meets the rules every other door
 * has: an approval's delay is read by the one parser (`none`, `0`, a duration), and a run started
 * with a given id is stored idempotently by that id (the same run again is answered as it is,
 * another run under the id is refused), as `baton run --id` and `Baton.startPlan` do. The server
 * keeps one command context for its session: a run asked for before it exists is still masked by
 * its own plan once it is stored.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, writePlan } from './helpers/cli.js';
import { callOk, callRefused, closeClients, mcpClient } from './helpers/mcp.js';
import { fixturePlan, planDir } from './helpers/plans.js';

afterEach(async () => {
  await closeClients();
  removeTempDirs();
});

interface Summary {
  runId: string;
  status: string;
}
interface StatusView extends Summary {
  steps: { stepId: string; status: string; dueAt: number | null }[];
}

const twoSteps = fixturePlan([
  { id: 'first', instruction: 'do the first thing' },
  { id: 'second', dependsOn: ['first'], instruction: 'then the second' },
]);

describe('baton mcp on the command layer', () => {
  it('approve_run reads its delay as every door does: "none" is no wait, "2m" waits, a bad one names delay', async () => {
    const { dir, home } = planDir('baton-mcp-delay-');
    const client = await mcpClient(home, { cwd: dir });
    const plan = writePlan(dir, twoSteps);

    const unhurried = await callOk<Summary>(client, 'propose', { path: plan });
    expect(await callRefused(client, 'approve_run', { runId: unhurried.runId, delay: 'soon' })).toMatch(
      /^INVALID_ARGUMENT: delay/,
    );
    expect(
      (await callOk<Summary>(client, 'approve_run', { runId: unhurried.runId, delay: 'none' })).status,
    ).toBe('running');
    await callOk(client, 'check', { maxSeconds: 60 });
    expect((await callOk<StatusView>(client, 'run_status', { runId: unhurried.runId })).status).toBe(
      'succeeded',
    );

    const paced = await callOk<Summary>(client, 'propose', { path: plan });
    await callOk(client, 'approve_run', { runId: paced.runId, delay: '2m' });
    await callOk(client, 'check', { maxSeconds: 60 });
    const waiting = await callOk<StatusView>(client, 'run_status', { runId: paced.runId });
    const first = waiting.steps.find((s) => s.stepId === 'first')!;
    const second = waiting.steps.find((s) => s.stepId === 'second')!;
    expect(first.status).toBe('succeeded');
    expect(second.status).not.toBe('succeeded');
    // Due two minutes after the step before it: far later than any check of this test reaches.
    expect(second.dueAt! - Date.now()).toBeGreaterThan(60_000);
  });

  it('run with plan text whose step names a known plan (plan: { name }) runs it as a child; run_status shows the tree', async () => {
    const { dir, home } = planDir('baton-mcp-named-plan-');
    const client = await mcpClient(home, { cwd: dir, args: ['--allow-run'] });
    const child = writePlan(
      dir,
      fixturePlan([{ id: 'fix', instruction: 'fix {{inputs.repo}}' }], {
        name: 'fix-repo',
        inputs: { repo: null },
      }),
    );
    const parent = JSON.stringify({
      name: 'fix-one',
      steps: [{ id: 'sub', plan: { name: 'fix-repo', inputs: { repo: 'alpha' } } }],
    });
    // Nothing knows fix-repo yet: refused, naming the step.
    expect(await callRefused(client, 'run', { plan: parent })).toMatch(
      /PLAN_NOT_FOUND: steps\.sub\.plan\.name: no plan named "fix-repo" is known here/,
    );
    await callOk(client, 'run', { path: child, runId: 'first', inputs: { repo: 'zero' } });
    await callOk(client, 'run', { plan: parent, runId: 'p1' });
    await callOk(client, 'check', { maxSeconds: 60 });
    const status = await callOk<StatusView & { children: unknown[] }>(client, 'run_status', { runId: 'p1' });
    expect(status.status).toBe('succeeded');
    const { runs } = await callOk<{ runs: (Summary & { planName: string })[] }>(client, 'list_runs');
    const children = runs.filter((run) => run.planName === 'fix-repo' && run.runId !== 'first');
    expect(children).toHaveLength(1);
    expect(await callOk(client, 'run_status', { runId: children[0]!.runId })).toMatchObject({
      parentRunId: 'p1',
      parentStepId: 'sub',
      status: 'succeeded',
    });
  });

  it('trigger_add stores a webhook trigger paused with the question for the person; trigger_resume starts it', async () => {
    const { dir, home } = planDir('baton-mcp-trigger-');
    const client = await mcpClient(home, { cwd: dir });
    const plan = writePlan(
      dir,
      fixturePlan([{ id: 'a', instruction: 'about {{inputs.title}}' }], { inputs: { title: null } }),
    );
    const added = await callOk<{ trigger: { paused: boolean; source: string }; question: string }>(
      client,
      'trigger_add',
      {
        name: 'issues',
        path: plan,
        source: 'github',
        secretEnv: 'GITHUB_WEBHOOK_SECRET',
        when: 'body.action == "opened"',
        inputs: { title: '{{body.issue.title}}' },
      },
    );
    expect(added.trigger).toMatchObject({ paused: true, source: 'github' });
    expect(added.question).toMatch(/POST \/hooks\/issues .* It is paused/);
    expect(
      await callRefused(client, 'trigger_add', {
        name: 'bad',
        path: plan,
        source: 'github',
        secretEnv: 'X',
        inputs: { title: '{{inputs.title}}' },
      }),
    ).toMatch(/INVALID_ARGUMENT: -i title: \{\{inputs\.title\}\} is not a delivery reference/);
    const shown = await callOk<{ trigger: { paused: boolean }; deliveries: unknown[] }>(
      client,
      'trigger_show',
      { name: 'issues' },
    );
    expect(shown).toMatchObject({ trigger: { paused: true }, deliveries: [] });
    expect(
      (await callOk<{ trigger: { paused: boolean } }>(client, 'trigger_resume', { name: 'issues' })).trigger
        .paused,
    ).toBe(false);
    const { triggers } = await callOk<{ triggers: { name: string; paused: boolean }[] }>(
      client,
      'trigger_list',
    );
    expect(triggers.map((t) => [t.name, t.paused])).toEqual([['issues', false]]);
    expect(await callRefused(client, 'trigger_show', { name: 'nothing' })).toMatch(
      /TRIGGER_NOT_FOUND: no trigger named "nothing"/,
    );
  });

  it('run with a runId is idempotent by that id: the same run is answered as it is, another is refused', async () => {
    const { dir, home } = planDir('baton-mcp-run-id-');
    const client = await mcpClient(home, { cwd: dir, args: ['--allow-run'] });
    const plan = writePlan(
      dir,
      fixturePlan([{ id: 'a', instruction: 'about {{inputs.topic}}' }], { inputs: { topic: null } }),
    );
    const args = { path: plan, runId: 'weekly-48', inputs: { topic: 'otters' } };
    const started = await callOk<Summary & { created: boolean }>(client, 'run', args);
    expect(started).toMatchObject({ runId: 'weekly-48', status: 'running', created: true });
    // A host that lost the answer asks again: the run is not stored twice, nor refused.
    const again = await callOk<Summary & { created: boolean }>(client, 'run', args);
    expect(again).toMatchObject({ runId: 'weekly-48', status: 'running', created: false });
    const other = await callRefused(client, 'run', { ...args, inputs: { topic: 'beavers' } });
    expect(other).toMatch(
      /^INVALID_ARGUMENT: a run with id "weekly-48" already exists and is not this run: its inputs differ \(topic\)/,
    );
    const { runs } = await callOk<{ runs: Summary[] }>(client, 'list_runs');
    expect(runs.map((run) => run.runId)).toEqual(['weekly-48']);
  });

  it('a run asked for before it exists is masked by its own plan once proposed', async () => {
    const { dir, home } = planDir('baton-mcp-later-');
    const hookUrl = 'http://127.0.0.1:9/notify-mcp-later-6a1d9e4c2f';
    const client = await mcpClient(home, { cwd: dir, env: { NOTIFY_TARGET: hookUrl } });
    const plan = writePlan(
      dir,
      fixturePlan([{ id: 'a', instruction: 'about {{inputs.topic}}' }], {
        inputs: { topic: null },
        hooks: [{ on: ['failed'], urlEnv: 'NOTIFY_TARGET' }],
      }),
    );
    // The session's first call stores nothing; its second makes the store and asks for the run.
    await callOk(client, 'list_runs');
    await callOk(client, 'propose', { path: plan, inputs: { topic: 'warm-up' } });
    expect(await callRefused(client, 'run_status', { runId: 'later' })).toMatch(/RUN_NOT_FOUND/);
    const proposed = await callOk<Summary & { summary: string }>(client, 'propose', {
      path: plan,
      runId: 'later',
      inputs: { topic: `post to ${hookUrl}` },
    });
    expect(proposed.summary).toContain('Inputs: topic=post to ');
    const status = await callOk(client, 'run_status', { runId: 'later' });
    const timeline = await callOk(client, 'timeline', { runId: 'later' });
    for (const answer of [proposed, status, timeline]) expect(JSON.stringify(answer)).not.toContain(hookUrl);
  });
});
