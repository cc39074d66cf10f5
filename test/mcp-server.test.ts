/**
 * `baton mcp` driven by the official MCP SDK's Client over stdio, as a host drives it: every tool's
 * happy path and its bad input (an error result, nothing stored), secrets masked in every answer,
 * sizes bounded, and a run followed through a resource subscription.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_STRING_CHARS, toolAnswer, toolError } from '../src/mcp/tool-output.js';
import { agentCommand, expectExit, removeTempDirs, runBaton, waitFor, writePlan } from './helpers/cli.js';
import { callOk, callRefused, closeClients, mcpClient } from './helpers/mcp.js';
import { fixturePlan, planDir } from './helpers/plans.js';

afterEach(async () => {
  await closeClients();
  removeTempDirs();
});

const TOOLS = [
  'approve_run',
  'approve_step',
  'cancel_run',
  'check',
  'classify',
  'file_changes',
  'list_runs',
  'propose',
  'reject_run',
  'reject_step',
  'resolve_step',
  'retry_step',
  'run_status',
  'schedule_add',
  'schedule_list',
  'schedule_pause',
  'schedule_preview',
  'schedule_resume',
  'schedule_rm',
  'schedule_show',
  'schedule_trigger',
  'schedule_update',
  'send_event',
  'skip_step',
  'step_log',
  'timeline',
  'trigger_add',
  'trigger_list',
  'trigger_pause',
  'trigger_resume',
  'trigger_show',
  'validate_plan',
];

const SECRET = 'sk-mcp-test-7d1e4f2a9b';
const secretEnv = { DEPLOY_PHRASE: SECRET, BATON_SECRET_ENV: 'DEPLOY_PHRASE' };

interface Summary {
  runId: string;
  status: string;
}
interface StatusView extends Summary {
  steps: { stepId: string; status: string; actions: string[]; lastError: string | null }[];
}

describe('what every tool answers', () => {
  it('is masked, each string cut to a bound, and an answer too large is refused with how to narrow it', () => {
    const secret = 'sk-unit-secret-123456';
    const answer = toolAnswer({ note: `key ${secret}`, log: 'x'.repeat(MAX_STRING_CHARS + 500) }, [secret]);
    const value = answer.structuredContent as { note: string; log: string };
    expect(value.note).not.toContain(secret);
    expect(value.log.length).toBeLessThan(MAX_STRING_CHARS + 100);
    expect(value.log).toMatch(/500 more characters/);
    const many = toolAnswer({ items: Array.from({ length: 50 }, () => 'y'.repeat(MAX_STRING_CHARS)) }, []);
    expect(many.isError).toBe(true);
    expect((many.content[0] as { text: string }).text).toMatch(/^OUTPUT_TOO_LARGE: .*ask for less/);
    expect(JSON.stringify(toolError(new Error(`failed with ${secret}`), [secret]))).not.toContain(secret);
  });
});

describe('baton mcp over stdio', () => {
  it('lists its tools with JSON Schema inputs and outputs; run exists only with --allow-run', async () => {
    const { home } = planDir('baton-mcp-tools-');
    const client = await mcpClient(home);
    expect(client.getServerVersion()?.name).toBe('baton');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOLS);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.description!.length).toBeLessThan(300);
    }
    expect(await callRefused(client, 'run', { plan: 'name: x' })).toMatch(/run not found/i);
    // Listing touched no store.
    expect(existsSync(home)).toBe(false);
  });

  it('with --allow-run, run stores a running run at once, which check drives', async () => {
    const { dir, home } = planDir('baton-mcp-allow-run-');
    const client = await mcpClient(home, { args: ['--allow-run'], cwd: dir });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('run');
    const plan = writePlan(dir, fixturePlan([{ id: 'a', instruction: 'do a' }]));
    const started = await callOk<Summary>(client, 'run', { path: plan });
    expect(started.status).toBe('running');
    await callOk(client, 'check', { maxSeconds: 60 });
    expect((await callOk<Summary>(client, 'run_status', { runId: started.runId })).status).toBe('succeeded');
    expect(await callRefused(client, 'run', { plan: 'name: x\nsteps: []\n' })).toMatch(/PLAN_INVALID/);
  });

  it('with --allow-run, rerun_run runs a step again keeping the unsafe send, and says what runs', async () => {
    const { dir, home } = planDir('baton-mcp-rerun-');
    const plan = writePlan(
      dir,
      fixturePlan([
        { id: 'analyze', instruction: 'analyze' },
        { id: 'report', instruction: 'report', dependsOn: ['analyze'] },
        { id: 'send', instruction: 'send', dependsOn: ['report'], sideEffect: 'unsafe' },
      ]),
    );
    expectExit(await runBaton(['run', plan, '--id', 'mcp-rerun'], { home }), 0);
    const client = await mcpClient(home, { args: ['--allow-run'], cwd: dir });
    expect(await callRefused(client, 'rerun_run', { runId: 'mcp-rerun', from: 'analyze' })).toMatch(
      /step send is unsafe.*--keep send/,
    );
    const rerun = await callOk<{
      status: string;
      rerun: { steps: string[]; kept: string[]; effects: string[] };
    }>(client, 'rerun_run', { runId: 'mcp-rerun', from: 'analyze', keep: ['send'] });
    expect(rerun.rerun).toMatchObject({ steps: ['analyze', 'report'], kept: ['send'], effects: [] });
    expect(rerun.status).toBe('running');
    await callOk(client, 'check', { maxSeconds: 60 });
    const status = await callOk<{ status: string; steps: { stepId: string; attempt: number }[] }>(
      client,
      'run_status',
      { runId: 'mcp-rerun' },
    );
    expect(status.status).toBe('succeeded');
    expect(status.steps.map((s) => [s.stepId, s.attempt])).toEqual([
      ['analyze', 2],
      ['report', 2],
      ['send', 1],
    ]);
    // Without --allow-run it is not served.
    const plain = await mcpClient(home);
    expect((await plain.listTools()).tools.map((tool) => tool.name)).not.toContain('rerun_run');
  });

  it('baton mcp --help (and baton help mcp) names every tool the server lists, run with --allow-run', async () => {
    const { home } = planDir('baton-mcp-help-');
    const client = await mcpClient(home, { args: ['--allow-run'] });
    const served = (await client.listTools()).tools.map((tool) => tool.name);
    for (const words of [
      ['mcp', '--help'],
      ['help', 'mcp'],
    ]) {
      const help = expectExit(await runBaton(words, { home }), 0).stdout;
      const listed = /\nTools: ([\s\S]*?)\nResources:/.exec(help)?.[1]?.replace(/\s+/g, ' ');
      expect(listed, words.join(' ')).toBeDefined();
      const names = listed!.match(/[a-z_]+/g) ?? [];
      for (const name of served) expect(names, `${words.join(' ')}: ${name}`).toContain(name);
      expect(listed).toContain(
        '(and run, rollback_run, rerun_run, retry_blocked, cancel_runs, with --allow-run)',
      );
    }
  });

  it('classify answers the skill rule; an empty request is refused', async () => {
    const { home } = planDir('baton-mcp-classify-');
    const client = await mcpClient(home);
    const verdict = await callOk<{ verdict: string; fired: string[] }>(client, 'classify', {
      request: 'research durable execution, then write a report, then email it to the team',
    });
    expect(verdict.verdict).toBe('MULTI_STEP');
    expect(verdict.fired).toContain('sequential_language');
    expect(await callRefused(client, 'classify', { request: '' })).toMatch(/request/);
    expect(await callRefused(client, 'classify', {})).toMatch(/request/);
  });

  it('validate_plan gives every problem with its path, refused commands included, and stores nothing', async () => {
    const { dir, home } = planDir('baton-mcp-validate-');
    const client = await mcpClient(home, { cwd: dir });
    const good = writePlan(dir, fixturePlan([{ id: 'a', instruction: 'do a' }]));
    expect(await callOk(client, 'validate_plan', { path: good })).toMatchObject({
      valid: true,
      problems: [],
    });
    const bad = await callOk<{ valid: boolean; problems: { path: string; problem: string }[] }>(
      client,
      'validate_plan',
      { plan: 'name: bad\nsteps:\n  - id: a\n    instruction: x\n    dependsOn: [nope]\n  - id: b\n' },
    );
    expect(bad.valid).toBe(false);
    expect(bad.problems.map((p) => p.path)).toEqual(
      expect.arrayContaining(['steps.a.dependsOn[0]', 'steps.b']),
    );
    const refused = await callOk<{ valid: boolean; problems: { path: string; problem: string }[] }>(
      client,
      'validate_plan',
      {
        plan: JSON.stringify({
          name: 'sh',
          steps: [{ id: 'a', instruction: 'x', agent: { command: ['sh', '-c'] } }],
        }),
      },
    );
    expect(refused.valid).toBe(false);
    expect(refused.problems[0]!.path).toBe('steps.a.agent.command');
    expect(await callRefused(client, 'validate_plan', {})).toMatch(/"plan".*"path"/);
    expect(await callRefused(client, 'validate_plan', { plan: 'name: x', path: good })).toMatch(
      /one of them/,
    );
    expect(await callRefused(client, 'validate_plan', { path: join(dir, 'missing.yaml') })).toMatch(
      /PLAN_NOT_FOUND/,
    );
    expect(existsSync(join(home, 'baton.db'))).toBe(false);
  });

  it('propose stores a run awaiting approval, its summary masked; approve_run starts it, check drives it', async () => {
    const { dir, home } = planDir('baton-mcp-propose-');
    const client = await mcpClient(home, {
      cwd: dir,
      env: { ...secretEnv, ECHO_MESSAGE: `the phrase is ${SECRET}` },
    });
    const plan = writePlan(
      dir,
      fixturePlan(
        [
          { id: 'first', instruction: `use the phrase ${SECRET}` },
          { id: 'second', dependsOn: ['first'], instruction: 'then this' },
        ],
        {},
        'agent-echo-message',
      ),
    );
    const proposed = await callOk<Summary & { summary: string; question: string }>(client, 'propose', {
      path: plan,
    });
    expect(proposed.status).toBe('awaiting_approval');
    expect(proposed.summary).toContain('use the phrase');
    expect(proposed.summary).toContain(`approve_run { "runId": "${proposed.runId}" }`);
    expect(proposed.question).toMatch(/wait between steps/);
    expect(JSON.stringify(proposed)).not.toContain(SECRET);
    // Nothing runs before the approval.
    expect(await callOk(client, 'check', { maxSeconds: 5 })).toMatchObject({ attemptsStarted: 0 });
    expect(await callRefused(client, 'approve_run', { runId: proposed.runId, delay: 'soon' })).toMatch(
      /delay/,
    );
    expect((await callOk<Summary>(client, 'run_status', { runId: proposed.runId })).status).toBe(
      'awaiting_approval',
    );

    expect((await callOk<Summary>(client, 'approve_run', { runId: proposed.runId })).status).toBe('running');
    await callOk(client, 'check', { maxSeconds: 60 });
    const done = await callOk<StatusView>(client, 'run_status', { runId: proposed.runId });
    expect(done.status).toBe('succeeded');
    expect(done.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    const log = await callOk<{ text: string }>(client, 'step_log', {
      runId: proposed.runId,
      stepId: 'first',
    });
    expect(log.text).toContain('the phrase is');
    const timeline = await callOk<{ events: { type: string }[] }>(client, 'timeline', {
      runId: proposed.runId,
    });
    expect(timeline.events.map((e) => e.type)).toContain('step.succeeded');
    const listed = await callOk<{ runs: Summary[] }>(client, 'list_runs', { status: 'succeeded' });
    expect(listed.runs.map((r) => r.runId)).toEqual([proposed.runId]);
    for (const answer of [done, log, timeline, listed]) expect(JSON.stringify(answer)).not.toContain(SECRET);
  });

  it('refuses a bad proposal with its reason and stores nothing; reject_run drops one', async () => {
    const { dir, home } = planDir('baton-mcp-refuse-');
    const client = await mcpClient(home, { cwd: dir, env: secretEnv });
    expect(await callRefused(client, 'propose', { plan: 'name: x\nsteps: []\n' })).toMatch(/PLAN_INVALID/);
    const untrusted = JSON.stringify({
      name: 'untrusted',
      steps: [{ id: 'a', instruction: 'x', agent: { command: [process.execPath, join(dir, 'mine.mjs')] } }],
    });
    expect(await callRefused(client, 'propose', { plan: untrusted })).toMatch(/refused/);
    const needsInput = writePlan(
      dir,
      fixturePlan([{ id: 'a', instruction: '{{inputs.topic}}' }], { inputs: { topic: null } }),
    );
    expect(await callRefused(client, 'propose', { path: needsInput })).toMatch(/INPUT_MISSING/);
    expect(await callRefused(client, 'propose', { path: needsInput, inputs: { topic: 5 } })).toMatch(/topic/);
    expect(await callOk(client, 'list_runs')).toEqual({ runs: [] });

    const proposed = await callOk<Summary>(client, 'propose', {
      path: needsInput,
      inputs: { topic: 'otters' },
    });
    expect((await callOk<Summary>(client, 'reject_run', { runId: proposed.runId })).status).toBe('cancelled');
    expect(await callRefused(client, 'approve_run', { runId: proposed.runId })).toMatch(
      /INVALID_TRANSITION|cannot/i,
    );
    expect(await callRefused(client, 'reject_run', { runId: 'no-such-run' })).toMatch(/RUN_NOT_FOUND/);
  });

  it('a blocked step: run_status names the tools; retry_step, skip_step, resolve_step and cancel_run act on it', async () => {
    const { dir, home } = planDir('baton-mcp-blocked-');
    const client = await mcpClient(home, { cwd: dir });
    const plan = writePlan(
      dir,
      fixturePlan(
        [
          { id: 'a', instruction: 'fail' },
          {
            id: 'b',
            dependsOn: ['a'],
            instruction: 'fail too',
            agent: { command: agentCommand('agent-fail') },
          },
          {
            id: 'c',
            dependsOn: ['b'],
            instruction: 'last',
            agent: { command: agentCommand('agent-succeed') },
          },
        ],
        { defaults: { retry: { maxAttempts: 1 } } },
        'agent-fail',
      ),
    );
    const { runId } = await callOk<Summary>(client, 'propose', { path: plan });
    await callOk(client, 'approve_run', { runId });
    const checked = await callOk<{ blocked: { id: string }[] }>(client, 'check', { maxSeconds: 60 });
    expect(checked.blocked.map((b) => b.id)).toEqual([runId]);
    const blocked = await callOk<StatusView>(client, 'run_status', { runId });
    expect(blocked.steps[0]).toMatchObject({ stepId: 'a', status: 'blocked' });
    expect(blocked.steps[0]!.actions).toEqual(['retry_step', 'skip_step', 'resolve_step']);
    expect(await callRefused(client, 'retry_step', { runId, stepId: 'nope' })).toMatch(/STEP_NOT_FOUND|nope/);
    expect(await callRefused(client, 'resolve_step', { runId, stepId: 'a' })).toMatch(/result/);
    expect(await callRefused(client, 'step_log', { runId, stepId: 'a', maxBytes: 10_000_000 })).toMatch(
      /maxBytes/,
    );

    expect((await callOk<Summary>(client, 'retry_step', { runId, stepId: 'a' })).status).toBe('running');
    await callOk(client, 'check', { maxSeconds: 60 });
    expect((await callOk<Summary>(client, 'skip_step', { runId, stepId: 'a' })).status).toBe('running');
    await callOk(client, 'check', { maxSeconds: 60 });
    const atB = await callOk<StatusView>(client, 'run_status', { runId });
    expect(atB.steps.map((s) => s.status)).toEqual(['skipped', 'blocked', 'pending']);
    await callOk(client, 'resolve_step', { runId, stepId: 'b', result: { done: 'by hand' } });
    await callOk(client, 'check', { maxSeconds: 60 });
    expect((await callOk<Summary>(client, 'run_status', { runId })).status).toBe('succeeded');

    const again = await callOk<Summary>(client, 'propose', { path: plan });
    await callOk(client, 'approve_run', { runId: again.runId });
    expect((await callOk<Summary>(client, 'cancel_run', { runId: again.runId })).status).toBe('cancelled');
    expect(await callOk(client, 'check', { maxSeconds: 5 })).toMatchObject({ attemptsStarted: 0 });
  });

  it('steps that wait: approve_step, reject_step and send_event end them; a bad payload is refused', async () => {
    const { dir, home } = planDir('baton-mcp-waits-');
    const client = await mcpClient(home, { cwd: dir });
    const plan = writePlan(
      dir,
      fixturePlan([
        { id: 'gate', wait: { for: 'approval', prompt: 'Ship it?' } },
        { id: 'ship', dependsOn: ['gate'], instruction: 'ship' },
        {
          id: 'deployed',
          wait: { for: 'event', event: 'deployed', schema: { type: 'object', required: ['version'] } },
        },
        {
          id: 'announce',
          dependsOn: ['deployed'],
          instruction: 'announce {{steps.deployed.result.version}}',
        },
      ]),
    );
    const { runId } = await callOk<Summary>(client, 'propose', { path: plan });
    await callOk(client, 'approve_run', { runId });
    const checked = await callOk<{ waiting: { stepId: string }[] }>(client, 'check', { maxSeconds: 30 });
    expect(checked.waiting.map((w) => w.stepId).sort()).toEqual(['deployed', 'gate']);
    const waiting = await callOk<StatusView>(client, 'run_status', { runId });
    expect(waiting.steps.find((s) => s.stepId === 'gate')!.actions).toEqual(['approve_step', 'reject_step']);
    expect(waiting.steps.find((s) => s.stepId === 'deployed')!.actions).toEqual(['send_event']);

    expect(await callRefused(client, 'send_event', { event: 'deployed', runId, data: { nope: 1 } })).toMatch(
      /wait\.schema/,
    );
    expect(await callRefused(client, 'approve_step', { runId, stepId: 'ship' })).toMatch(
      /INVALID_TRANSITION|wait/i,
    );
    const sent = await callOk<{ deliveries: { outcome: string }[] }>(client, 'send_event', {
      event: 'deployed',
      runId,
      data: { version: '1.2' },
    });
    expect(sent.deliveries.map((d) => d.outcome)).toEqual(['received']);
    await callOk(client, 'approve_step', { runId, stepId: 'gate', comment: 'yes, ship it', by: 'ana' });
    await callOk(client, 'check', { maxSeconds: 60 });
    expect((await callOk<Summary>(client, 'run_status', { runId })).status).toBe('succeeded');

    const other = await callOk<Summary>(client, 'propose', { path: plan });
    await callOk(client, 'approve_run', { runId: other.runId });
    await callOk(client, 'check', { maxSeconds: 30 });
    await callOk(client, 'reject_step', { runId: other.runId, stepId: 'gate', comment: 'not today' });
    const rejected = await callOk<StatusView>(client, 'run_status', { runId: other.runId });
    expect(rejected.steps.find((s) => s.stepId === 'ship')!.status).toBe('skipped');
  });

  it('bounds what it returns: a long log is its end, at most maxBytes', async () => {
    const { dir, home } = planDir('baton-mcp-bounds-');
    const client = await mcpClient(home, { cwd: dir, env: { PRINT_MB: '1' } });
    const plan = writePlan(dir, fixturePlan([{ id: 'loud', instruction: 'talk' }], {}, 'agent-print-lots'));
    const { runId } = await callOk<Summary>(client, 'propose', { path: plan });
    await callOk(client, 'approve_run', { runId });
    await callOk(client, 'check', { maxSeconds: 60 });
    const log = await callOk<{ text: string; truncated: boolean; bytes: number }>(client, 'step_log', {
      runId,
      stepId: 'loud',
      maxBytes: 4096,
    });
    expect(log.truncated).toBe(true);
    expect(log.bytes).toBeGreaterThan(1024 * 1024);
    expect(Buffer.byteLength(log.text)).toBeLessThanOrEqual(4096);
    expect(log.text.trimEnd().endsWith('END')).toBe(true);
    const some = await callOk<{ events: unknown[]; truncated: boolean }>(client, 'timeline', {
      runId,
      limit: 2,
    });
    expect(some.events).toHaveLength(2);
    expect(some.truncated).toBe(true);
  });

  it('a subscription to baton://runs/<id> hears each change of the run', async () => {
    const { dir, home } = planDir('baton-mcp-subscribe-');
    const client = await mcpClient(home, { cwd: dir });
    const plan = writePlan(
      dir,
      fixturePlan([
        { id: 'gate', wait: { for: 'approval' } },
        { id: 'after', dependsOn: ['gate'], instruction: 'go' },
      ]),
    );
    const { runId } = await callOk<Summary>(client, 'propose', { path: plan });
    const uri = `baton://runs/${runId}`;
    const heard: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      heard.push(notification.params.uri);
    });
    await client.subscribeResource({ uri });
    const read = await client.readResource({ uri });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({
      runId,
      status: 'awaiting_approval',
    });
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain(uri);

    await callOk(client, 'approve_run', { runId });
    await waitFor(() => heard.length >= 1, 20_000);
    // The step starts waiting: another change, another notification.
    const before = heard.length;
    await callOk(client, 'check', { maxSeconds: 30 });
    await waitFor(() => heard.length > before, 20_000);
    expect(new Set(heard)).toEqual(new Set([uri]));
    await client.unsubscribeResource({ uri });
    await expect(client.subscribeResource({ uri: 'baton://runs/no-such-run' })).rejects.toThrow(
      /no-such-run/,
    );
  });
});
