/**
 * The schedule tools of `baton mcp`, driven by the SDK's client over stdio: each tool's happy path
 * and bad input (an error result with its code, nothing stored); a schedule added through MCP is
 * stored paused, so `check` after its slot starts no run, until schedule_resume relays the person's
 * yes; its summary masks the environment's and the plan's secrets; a new plan pauses it again.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCommand, expectExit, removeTempDirs, runBaton, waitFor, writePlan } from './helpers/cli.js';
import { callOk, callRefused, closeClients, mcpClient } from './helpers/mcp.js';
import { fixturePlan, planDir } from './helpers/plans.js';
import { scheduleAddedEarlier } from './helpers/schedules.js';

afterEach(async () => {
  await closeClients();
  removeTempDirs();
});

const SECRET = 'sk-mcp-sched-5c2e8a1f7d';
/** A value secret only because the plan names its variable (a hook's urlEnv). */
const HOOK_URL = 'http://127.0.0.1:9/notify-sched-7f3a9c2b1d';
const secretEnv = { DEPLOY_PHRASE: SECRET, BATON_SECRET_ENV: 'DEPLOY_PHRASE', NOTIFY_TARGET: HOOK_URL };

interface FireTime {
  at: string;
  local: string;
  tz: string;
}
interface View {
  name: string;
  paused: boolean;
  timing: string;
  planHash: string;
  inputs: Record<string, string>;
  nextFireTimes: number[];
  lastRun: { id: string; status: string | null } | null;
}
interface Added {
  name: string;
  paused: boolean;
  summary: string;
  question?: string;
  firesAt: FireTime[];
  steps: { id: string }[];
  schedule: View;
}

const oneStep = (instruction = 'fetch {{inputs.topic}}') =>
  fixturePlan([{ id: 'fetch', instruction }], { name: 'report', inputs: { topic: { default: 'rivals' } } });

describe('baton mcp: schedules', () => {
  it('lists the schedule tools with their annotations; preview answers fire times and refuses bad timing', async () => {
    const { home } = planDir('baton-mcp-sched-preview-');
    const client = await mcpClient(home);
    const tools = (await client.listTools()).tools.filter((t) => t.name.startsWith('schedule_'));
    expect(tools.map((t) => t.name).sort()).toEqual([
      'schedule_add',
      'schedule_list',
      'schedule_pause',
      'schedule_preview',
      'schedule_resume',
      'schedule_rm',
      'schedule_show',
      'schedule_trigger',
      'schedule_update',
    ]);
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    for (const name of ['schedule_preview', 'schedule_list', 'schedule_show'])
      expect(hints[name]?.readOnlyHint).toBe(true);
    expect(hints.schedule_rm?.destructiveHint).toBe(true);
    expect(hints.schedule_add?.readOnlyHint).toBe(false);

    const preview = await callOk<{ fireTimes: FireTime[] }>(client, 'schedule_preview', {
      cron: '30 2 * * *',
      tz: 'Europe/Berlin',
      from: '2026-10-24T12:00:00Z',
      count: 3,
    });
    expect(preview.fireTimes).toEqual([
      { at: '2026-10-25T00:30:00.000Z', local: '2026-10-25 02:30:00', tz: 'Europe/Berlin' },
      { at: '2026-10-26T01:30:00.000Z', local: '2026-10-26 02:30:00', tz: 'Europe/Berlin' },
      { at: '2026-10-27T01:30:00.000Z', local: '2026-10-27 02:30:00', tz: 'Europe/Berlin' },
    ]);
    const every = await callOk<{ fireTimes: FireTime[] }>(client, 'schedule_preview', {
      every: '15m',
      from: '2026-12-03T00:00:00Z',
    });
    expect(every.fireTimes).toHaveLength(5);
    expect(every.fireTimes[0]).toEqual({
      at: '2026-12-03T00:15:00.000Z',
      local: '2026-12-03 00:15:00',
      tz: 'UTC',
    });

    const refused = (args: Record<string, unknown>) => callRefused(client, 'schedule_preview', args);
    expect(await refused({ cron: '0 25 * * *' })).toMatch(
      /^INVALID_ARGUMENT: cron "0 25 \* \* \*": Invalid value for hour: 25/,
    );
    expect(await refused({ cron: '0 8 * * *', tz: 'Asia/Shangai' })).toMatch(
      /tz "Asia\/Shangai": unknown time zone/,
    );
    expect(await refused({ every: '500ms' })).toMatch(/every: a schedule fires at most once a minute/);
    expect(await refused({})).toMatch(/give either cron .* or every/);
    expect(await refused({ every: '1m', from: 'soonish' })).toMatch(/from "soonish": expected a time/);
    expect(await refused({ every: '1m', count: 101 })).toMatch(/count/);
    // Nothing was stored: no store was even made.
    expect(existsSync(home)).toBe(false);
  });

  it('schedule_add stores it paused, its summary masked; check after its slot starts nothing until schedule_resume', async () => {
    const { dir, home } = planDir('baton-mcp-sched-add-');
    const client = await mcpClient(home, { cwd: dir, env: secretEnv });
    const plan = writePlan(dir, {
      ...oneStep(`fetch {{inputs.topic}} with the phrase ${SECRET} for ${HOOK_URL}`),
      hooks: [{ on: ['failed'], urlEnv: 'NOTIFY_TARGET' }],
    });
    const added = await callOk<Added>(client, 'schedule_add', {
      name: 'often',
      path: plan,
      every: '1m',
      // The hook's URL in an input: masked wherever the schedule is shown, schedule_list too.
      inputs: { topic: `prices for ${HOOK_URL}` },
    });
    expect(added).toMatchObject({ name: 'often', paused: true, steps: [{ id: 'fetch' }] });
    expect(added.question).toMatch(/Start this schedule\?/);
    expect(added.summary).toContain('Schedule "often" of plan "report": every 1m; overlap skip');
    expect(added.summary).toContain('stored paused: nothing runs until you say yes');
    expect(added.summary).toContain('fetch {{inputs.topic}} with the phrase');
    expect(added.summary).toContain('Inputs: topic=prices');
    expect(added.summary).toContain('schedule_resume { "name": "often" }');
    expect(added.firesAt).toHaveLength(3);
    expect(added.summary).toContain(`${added.firesAt[0]!.local} UTC`);
    expect(added.schedule).toMatchObject({ paused: true, nextFireTimes: [], lastRun: null });
    expect(JSON.stringify(added)).not.toContain(SECRET);
    expect(JSON.stringify(added)).not.toContain(HOOK_URL);

    // The CLI sees it paused; a check after its first slot starts no run.
    const listed = JSON.parse(expectExit(await runBaton(['schedule', 'list', '--json'], { home }), 0).stdout);
    expect(listed).toMatchObject([{ name: 'often', paused: true }]);
    // As if added a minute ago: its first slot has passed (no test waits for a real minute).
    scheduleAddedEarlier(home, 'often', 60_000);
    expect(await callOk(client, 'check', { maxSeconds: 5 })).toMatchObject({ attemptsStarted: 0 });
    expectExit(await runBaton(['check', '--quiet'], { home, cwd: dir }), 0);
    expect(await callOk(client, 'list_runs')).toEqual({ runs: [] });
    const shown = await callOk<View & { slots: unknown[] }>(client, 'schedule_show', { name: 'often' });
    expect(shown).toMatchObject({ paused: true, slots: [] });
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    expect(JSON.stringify(shown)).not.toContain(HOOK_URL);
    const list = await callOk<{ schedules: View[] }>(client, 'schedule_list');
    expect(list.schedules[0]!.inputs.topic).toMatch(/^prices for /);
    expect(JSON.stringify(list)).not.toContain(HOOK_URL);

    // The person's yes: it fires.
    const resumed = await callOk<Added>(client, 'schedule_resume', { name: 'often' });
    expect(resumed.paused).toBe(false);
    expect(resumed.question).toBeUndefined();
    expect(resumed.schedule.nextFireTimes).toHaveLength(3);
    // Resumed, it goes on from now: as if resumed a minute ago, its next slot is due.
    scheduleAddedEarlier(home, 'often', 60_000);
    const runId = await waitFor(
      async () => {
        await callOk(client, 'check', { maxSeconds: 2 });
        const { schedules } = await callOk<{ schedules: View[] }>(client, 'schedule_list');
        return schedules[0]!.lastRun?.id;
      },
      30_000,
      'a run of the schedule',
      100,
    );
    expect(runId).toMatch(/^often-\d{8}T\d{6}Z$/);
    expect((await callOk<View>(client, 'schedule_pause', { name: 'often' })).paused).toBe(true);
    const history = await callOk<{ slots: { runId: string | null; outcome: string }[] }>(
      client,
      'schedule_show',
      { name: 'often', limit: 100 },
    );
    expect(history.slots.some((s) => s.runId === runId && s.outcome === 'started')).toBe(true);
  });

  it('refuses bad input with its code and message, storing nothing', async () => {
    const { dir, home } = planDir('baton-mcp-sched-bad-');
    const client = await mcpClient(home, { cwd: dir });
    const plan = writePlan(dir, oneStep());
    const add = (args: Record<string, unknown>) =>
      callRefused(client, 'schedule_add', { name: 'daily', path: plan, ...args });
    expect(await add({ cron: '0 25 * * *' })).toMatch(
      /^INVALID_ARGUMENT: cron "0 25 \* \* \*": Invalid value for hour/,
    );
    expect(await add({ cron: '0 8 * * *', tz: 'Mars/Olympus' })).toMatch(
      /tz "Mars\/Olympus": unknown time zone/,
    );
    expect(await add({ every: '59s' })).toMatch(
      /^INVALID_ARGUMENT: every: a schedule fires at most once a minute \(the minimum interval, 60000 ms\)/,
    );
    expect(await add({ cron: '*/30 * * * * *' })).toMatch(
      /cron "\*\/30 \* \* \* \* \*": its slots come 30s apart/,
    );
    expect(await add({ every: '1m', overlap: 'sometimes' })).toMatch(/overlap/);
    expect(await add({ every: '1m', start: true })).toMatch(
      /start: true needs a server started with baton mcp --allow-run/,
    );
    expect(await callRefused(client, 'schedule_add', { name: 'bad name', path: plan, every: '1m' })).toMatch(
      /schedule name "bad name" must match/,
    );
    expect(await callRefused(client, 'schedule_add', { name: 'daily', every: '1m' })).toMatch(
      /give the plan/,
    );
    expect(await add({ every: '1m', path: undefined, plan: 'name: x\nsteps: []\n' })).toMatch(/PLAN_INVALID/);
    const untrusted = JSON.stringify({
      name: 'untrusted',
      steps: [{ id: 'a', instruction: 'x', agent: { command: [process.execPath, join(dir, 'mine.mjs')] } }],
    });
    expect(await add({ every: '1m', path: undefined, plan: untrusted })).toMatch(/refused/);
    const fn = JSON.stringify({ name: 'fn', steps: [{ id: 'a', fn: 'noop' }] });
    expect(await add({ every: '1m', path: undefined, plan: fn })).toMatch(
      /CONFIG_INVALID: .*call TypeScript functions/,
    );
    // Nothing was stored: no store was even made.
    expect(existsSync(home)).toBe(false);
    expect(await callOk(client, 'schedule_list')).toEqual({ schedules: [] });
    for (const tool of [
      'schedule_show',
      'schedule_pause',
      'schedule_resume',
      'schedule_trigger',
      'schedule_rm',
    ])
      expect(await callRefused(client, tool, { name: 'nope' })).toMatch(
        /^SCHEDULE_NOT_FOUND: no schedule named "nope"/,
      );
    expect(await callRefused(client, 'schedule_update', { name: 'nope', every: '1h' })).toMatch(
      /SCHEDULE_NOT_FOUND/,
    );

    await callOk(client, 'schedule_add', { name: 'daily', path: plan, every: '1h' });
    expect(await add({ every: '2h' })).toMatch(/^SCHEDULE_EXISTS: a schedule named "daily" exists already/);
    expect(await callRefused(client, 'schedule_show', { name: 'nope' })).toMatch(/SCHEDULE_NOT_FOUND/);
    expect(await callRefused(client, 'schedule_update', { name: 'daily', cron: '61 * * * *' })).toMatch(
      /cron "61/,
    );
    expect(await callRefused(client, 'schedule_update', { name: 'daily', inputs: { topic: 'x' } })).toMatch(
      /inputs and workspace go with plan or path: give the plan again/,
    );
    const { schedules } = await callOk<{ schedules: View[] }>(client, 'schedule_list');
    expect(schedules).toMatchObject([{ name: 'daily', timing: 'every 1h', paused: true }]);
  });

  it('schedule_update keeps what is not given; any change pauses it again; trigger (active only) and rm', async () => {
    const { dir, home } = planDir('baton-mcp-sched-update-');
    const client = await mcpClient(home, { cwd: dir });
    const plan = writePlan(dir, oneStep());
    const added = await callOk<Added>(client, 'schedule_add', {
      name: 'daily',
      path: plan,
      cron: '0 8 * * *',
      tz: 'Asia/Shanghai',
      inputs: { topic: 'prices' },
    });
    await callOk(client, 'schedule_resume', { name: 'daily' });
    // New options only: the plan, its inputs and the zone stay; the person said yes to the old
    // timing, not this one (a daily schedule made every second would be work they never saw).
    const retimed = await callOk<Added>(client, 'schedule_update', {
      name: 'daily',
      cron: '0 9 * * 1-5',
      overlap: 'queue',
    });
    expect(retimed.paused).toBe(true);
    expect(retimed.summary).toMatch(/^The change paused the schedule/);
    expect(retimed.schedule).toMatchObject({
      timing: 'cron "0 9 * * 1-5" (UTC)',
      planHash: added.schedule.planHash,
      inputs: { topic: 'prices' },
    });
    // Into shadow and back to live: going live is a change the person says yes to again.
    await callOk(client, 'schedule_resume', { name: 'daily' });
    const shadowed = await callOk<Added>(client, 'schedule_update', { name: 'daily', shadow: true });
    expect(shadowed.schedule).toMatchObject({ rules: { shadow: true } });
    await callOk(client, 'schedule_resume', { name: 'daily' });
    const live = await callOk<Added>(client, 'schedule_update', { name: 'daily', shadow: false });
    expect(live.paused).toBe(true);
    expect(live.schedule).toMatchObject({ rules: { shadow: false }, timing: 'cron "0 9 * * 1-5" (UTC)' });
    const rezoned = await callOk<Added>(client, 'schedule_update', { name: 'daily', tz: 'Europe/Berlin' });
    expect(rezoned.schedule.timing).toBe('cron "0 9 * * 1-5" (Europe/Berlin)');
    expect(rezoned.paused).toBe(true);
    // A paused schedule is not triggered through MCP: it may be one the person never said yes to.
    expect(await callRefused(client, 'schedule_trigger', { name: 'daily' })).toMatch(
      /INVALID_TRANSITION: schedule daily is paused: it runs once the person says yes \(schedule_resume\)/,
    );
    await callOk(client, 'schedule_resume', { name: 'daily' });
    // A new plan: the person approves it again.
    const replaced = await callOk<Added>(client, 'schedule_update', {
      name: 'daily',
      plan: JSON.stringify({ ...oneStep('fetch it again'), name: 'report' }),
    });
    expect(replaced.paused).toBe(true);
    expect(replaced.summary).toMatch(/^The change paused the schedule/);
    expect(replaced.summary).toContain('fetch it again');
    expect(replaced.question).toMatch(/Start this schedule\?/);
    expect(replaced.schedule.planHash).not.toBe(added.schedule.planHash);
    expect(replaced.schedule.timing).toBe('cron "0 9 * * 1-5" (Europe/Berlin)');
    expect(replaced.schedule.inputs).toEqual({ topic: 'rivals' });

    await callOk(client, 'schedule_resume', { name: 'daily' });
    const triggered = await callOk<{ runId: string; status: string }>(client, 'schedule_trigger', {
      name: 'daily',
    });
    expect(triggered.runId).toMatch(/^daily-\d{8}T\d{6}Z-manual$/);
    expect(triggered.status).toBe('running');
    expect(await callOk(client, 'schedule_rm', { name: 'daily' })).toEqual({ name: 'daily', removed: true });
    expect(await callOk(client, 'schedule_list')).toEqual({ schedules: [] });
    expect(await callRefused(client, 'schedule_rm', { name: 'daily' })).toMatch(/SCHEDULE_NOT_FOUND/);
    // Its runs stay.
    expect((await callOk<{ runId: string }>(client, 'run_status', { runId: triggered.runId })).runId).toBe(
      triggered.runId,
    );
  });

  it('with --allow-run, start: true stores it active at once', async () => {
    const { dir, home } = planDir('baton-mcp-sched-allow-');
    const client = await mcpClient(home, { args: ['--allow-run'], cwd: dir });
    const plan = writePlan(
      dir,
      fixturePlan([{ id: 'a', instruction: 'do a', agent: { command: agentCommand('agent-succeed') } }]),
    );
    const added = await callOk<Added>(client, 'schedule_add', {
      name: 'hourly',
      path: plan,
      every: '1h',
      start: true,
    });
    expect(added.paused).toBe(false);
    expect(added.question).toBeUndefined();
    expect(added.schedule.nextFireTimes).toHaveLength(3);
    const paused = await callOk<Added>(client, 'schedule_add', { name: 'held', path: plan, every: '1h' });
    expect(paused.paused).toBe(true);
  });
});
