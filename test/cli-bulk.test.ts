/**
 * Operations over many runs at once, and labels: `baton run -l team=growth`, `status --label
 * --plan --status --since`, `retry --blocked [--class] [--label] [--plan] [--dry-run]` and `cancel`
 * with the same filters, each printing exactly what it touches. Real processes over a real SQLite
 * file; the store's half runs on PostgreSQL too (test/store-contract.ts, "bulk").
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console/console-server.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import {
  agentCommand,
  batonJson,
  expectExit,
  removeTempDirs,
  runBaton,
  timeline,
  writePlan,
} from './helpers/cli.js';
import { csrfOf, startTestConsole, withSession } from './helpers/console.js';
import { callOk, closeClients, mcpClient } from './helpers/mcp.js';
import { planDir } from './helpers/plans.js';

const opened: { console: RunningConsole; store: SqliteStore }[] = [];
afterEach(async () => {
  await closeClients();
  for (const item of opened.splice(0)) {
    await item.console.close();
    await item.store.close();
  }
});
afterAll(() => removeTempDirs());

/** A one-step plan whose agent ends as DECLARE_SCRIPT says (agent-declare.mjs); one attempt. */
const plan = (name: string, stepId = 'work') => ({
  name,
  defaults: { agent: { command: agentCommand('agent-declare') }, retry: { maxAttempts: 1 } },
  steps: [{ id: stepId, instruction: 'do it' }],
});

const declared = (failureClass: string) => ({
  stdout: [JSON.stringify({ baton: { class: failureClass, message: `${failureClass} failure` } })],
  exit: 1,
});
/** `work` (plan flaky) fails as transient, `guard` (plan strict) as fatal. */
const FAILING = JSON.stringify({ work: declared('transient'), guard: declared('fatal') });

interface RunRow {
  id: string;
  status: string;
  labels?: Record<string, string>;
}

/** Runs f1..f3 of plan `flaky` blocked as transient (f1, f2 labelled team=growth), s1 of `strict` as fatal. */
async function blockedRuns() {
  const { dir, home } = planDir('baton-bulk-');
  const flaky = writePlan(dir, plan('flaky'), { name: 'flaky.yaml' });
  const strict = writePlan(dir, plan('strict', 'guard'), { name: 'strict.yaml' });
  const start = async (file: string, id: string, labels: string[]) =>
    expectExit(await runBaton(['run', file, '--id', id, '--detach', ...labels], { home }), 0);
  await start(flaky, 'f1', ['-l', 'team=growth', '-l', 'env=prod']);
  await start(flaky, 'f2', ['--label', 'team=growth']);
  await start(flaky, 'f3', []);
  await start(strict, 's1', ['-l', 'team=growth']);
  expectExit(await runBaton(['check'], { home, env: { DECLARE_SCRIPT: FAILING }, timeoutMs: 120_000 }), 1);
  const status = async (id: string) => (await batonJson<RunRow>(['status', id], { home }, [0, 1])).status;
  return { home, status };
}

describe('labels', () => {
  it('run -l stores them; status lists by --label, --plan, --status and --since, and shows them', async () => {
    const { home } = await blockedRuns();
    const listed = await batonJson<RunRow[]>(['status', '--label', 'team=growth'], { home });
    expect(listed.map((run) => run.id).sort()).toEqual(['f1', 'f2', 's1']);
    expect(listed.find((run) => run.id === 'f1')?.labels).toEqual({ env: 'prod', team: 'growth' });
    const both = await batonJson<RunRow[]>(['status', '-l', 'team=growth', '-l', 'env=prod'], { home });
    expect(both.map((run) => run.id)).toEqual(['f1']);
    const strictOnly = await batonJson<RunRow[]>(['status', '--plan', 'strict', '--status', 'blocked'], {
      home,
    });
    expect(strictOnly.map((run) => run.id)).toEqual(['s1']);
    expect(await batonJson<RunRow[]>(['status', '--status', 'succeeded'], { home })).toEqual([]);
    expect((await batonJson<RunRow[]>(['status', '--since', '1h'], { home })).length).toBe(4);
    const text = expectExit(await runBaton(['status', '--label', 'team=growth'], { home }), 0).stdout;
    expect(text).toContain('LABELS');
    expect(text).toMatch(/f1 .*env=prod,team=growth/);
    const one = expectExit(await runBaton(['status', 'f2'], { home }), 1).stdout;
    expect(one).toContain('labels: team=growth');
    expect((await batonJson<RunRow>(['status', 'f2'], { home }, 1)).labels).toEqual({ team: 'growth' });
  }, 180_000);

  it("schedule add -l labels each slot's run; schedule update -l replaces them for the next runs", async () => {
    const { dir, home } = planDir('baton-bulk-');
    const file = writePlan(dir, plan('nightly'), { name: 'nightly.yaml' });
    expectExit(
      await runBaton(['schedule', 'add', 'nightly', file, '--every', '1h', '-l', 'team=growth'], { home }),
      0,
    );
    expectExit(await runBaton(['schedule', 'trigger', 'nightly'], { home }), 0);
    const first = await batonJson<RunRow[]>(['status', '--label', 'team=growth'], { home });
    expect(first).toHaveLength(1);
    expect(first[0]!.labels).toEqual({ team: 'growth' });
    expectExit(await runBaton(['schedule', 'update', 'nightly', '-l', 'team=core'], { home }), 0);
    expectExit(await runBaton(['schedule', 'trigger', 'nightly'], { home }), 0);
    const core = await batonJson<RunRow[]>(['status', '--label', 'team=core'], { home });
    expect(core).toHaveLength(1);
    expect(core[0]!.id).not.toBe(first[0]!.id);
    expect(await batonJson<RunRow[]>(['status', '--label', 'team=growth'], { home })).toHaveLength(1);
  }, 120_000);

  it('refuses a label that is not key=value, a bad key, and a filter given with a run id (exit 2)', async () => {
    const { dir, home } = planDir('baton-bulk-');
    const file = writePlan(dir, plan('flaky'), { name: 'flaky.yaml' });
    const bad = expectExit(await runBaton(['run', file, '-l', 'team'], { home }), 2);
    expect(bad.stderr).toContain('--label: expected key=value (e.g. team=growth), got "team"');
    const badKey = expectExit(await runBaton(['run', file, '-l', '-x=1'], { home }), 2);
    expect(badKey.stderr).toContain('label key "-x"');
    expect(expectExit(await runBaton(['status', 'f1', '--plan', 'flaky'], { home }), 2).stderr).toContain(
      'without a run id',
    );
    expect(expectExit(await runBaton(['status', '--status', 'done'], { home }), 2).stderr).toContain(
      '--status: "done" is not a run status',
    );
  });
});

describe('retry --blocked and cancel with filters', () => {
  it('--dry-run lists exactly the matching runs and changes nothing; without it retries exactly those', async () => {
    const { home, status } = await blockedRuns();
    const dry = expectExit(
      await runBaton(['retry', '--blocked', '--class', 'transient', '--label', 'team=growth', '--dry-run'], {
        home,
      }),
      0,
    );
    expect(dry.stdout).toContain('would retry run f1 (flaky) step work');
    expect(dry.stdout).toContain('would retry run f2 (flaky) step work');
    expect(dry.stdout).not.toContain('f3');
    expect(dry.stdout).not.toContain('s1');
    expect(dry.stdout).toContain('2 runs would retry (dry run: nothing changed)');
    for (const id of ['f1', 'f2', 'f3', 's1']) {
      expect(await status(id)).toBe('blocked');
      expect((await timeline(home, id)).some((e) => e.type === 'step.retry_requested')).toBe(false);
    }
    const json = await batonJson<{ dryRun: boolean; runs: { runId: string; stepIds: string[] }[] }>(
      ['retry', '--blocked', '--class', 'transient', '--dry-run'],
      { home },
    );
    expect(json.dryRun).toBe(true);
    // Oldest blocked first: the order the check blocked them in; compared as a set here.
    expect(json.runs.map((run) => [run.runId, run.stepIds]).sort()).toEqual([
      ['f1', ['work']],
      ['f2', ['work']],
      ['f3', ['work']],
    ]);

    const done = expectExit(
      await runBaton(['retry', '--blocked', '--class', 'transient', '--label', 'team=growth'], { home }),
      0,
    );
    expect(done.stdout).toContain('retried run f1 (flaky) step work');
    expect(done.stdout).toContain('2 runs retried');
    expectExit(await runBaton(['check'], { home, timeoutMs: 120_000 }), 1);
    expect([await status('f1'), await status('f2'), await status('f3'), await status('s1')]).toEqual([
      'succeeded',
      'succeeded',
      'blocked',
      'blocked',
    ]);
    // Nothing left to match: said so, exit 0.
    const none = expectExit(
      await runBaton(['retry', '--blocked', '--class', 'transient', '--plan', 'strict'], { home }),
      0,
    );
    expect(none.stdout).toContain('no run matches: nothing to retry');
  }, 240_000);

  it('cancel with filters cancels exactly the runs they choose; without a run or a filter it is refused', async () => {
    const { home, status } = await blockedRuns();
    const refused = expectExit(await runBaton(['cancel'], { home }), 2);
    expect(refused.stderr).toContain('cancel: name a run, or filters');
    expect(expectExit(await runBaton(['retry'], { home }), 2).stderr).toContain('--blocked');
    expect(
      expectExit(await runBaton(['retry', '--blocked', '--class', 'slow'], { home }), 2).stderr,
    ).toContain('--class: "slow" is not a failure class');
    const dry = expectExit(await runBaton(['cancel', '--plan', 'flaky', '--dry-run'], { home }), 0);
    expect(dry.stdout).toContain('3 runs would cancel');
    const cancelled = await batonJson<{ runs: { runId: string; outcome: string }[] }>(
      ['cancel', '--blocked', '--class', 'fatal'],
      { home },
    );
    expect(cancelled.runs).toEqual([
      { runId: 's1', planName: 'strict', stepIds: ['guard'], outcome: 'cancelled' },
    ]);
    expect(await status('s1')).toBe('cancelled');
    expect(await status('f1')).toBe('blocked');
  }, 180_000);
});

describe('the console and MCP', () => {
  it('the runs page filters by label; the inbox retries or cancels the runs ticked', async () => {
    const { home, status } = await blockedRuns();
    const store = SqliteStore.open(join(home, 'baton.db'));
    const console = await startTestConsole(store, home);
    opened.push({ console, store });
    const page = await (
      await fetch(`${console.origin}/?label=team%3Dgrowth`, { headers: withSession() })
    ).text();
    const listed = [...page.matchAll(/<tr data-run="([^"]+)"/g)].map((m) => m[1]).sort();
    expect(listed).toEqual(['f1', 'f2', 's1']);
    expect(page).toContain('env=prod');
    const inbox = await (await fetch(`${console.origin}/inbox`, { headers: withSession() })).text();
    expect(inbox).toContain('data-action="retry-selected"');
    const csrf = await csrfOf(console.origin, '/inbox');
    const post = (path: string, runs: string[]) =>
      fetch(`${console.origin}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: withSession({ 'content-type': 'application/x-www-form-urlencoded' }),
        body: new URLSearchParams([['csrf', csrf], ...runs.map((run) => ['run', run])]).toString(),
      });
    const retried = await post('/inbox/retry', ['f1', 'f3']);
    expect(retried.status).toBe(303);
    expect(retried.headers.get('location')).toBe('/inbox');
    for (const [id, asked] of [
      ['f1', true],
      ['f2', false],
      ['f3', true],
    ] as const)
      expect((await store.getEvents(id)).some((e) => e.type === 'step.retry_requested')).toBe(asked);
    expect((await post('/inbox/cancel', ['s1'])).status).toBe(303);
    expect(await status('s1')).toBe('cancelled');
    expect(await status('f2')).toBe('blocked');
  }, 180_000);

  it('retry_blocked and cancel_runs are served with --allow-run only; list_runs filters by labels', async () => {
    const { home, status } = await blockedRuns();
    const plain = await mcpClient(home);
    const tools = (await plain.listTools()).tools.map((tool) => tool.name);
    expect(tools).not.toContain('retry_blocked');
    const listed = await callOk<{ runs: { runId: string; labels?: Record<string, string> }[] }>(
      plain,
      'list_runs',
      {
        labels: { team: 'growth' },
        plan: 'flaky',
      },
    );
    expect(listed.runs.map((run) => run.runId).sort()).toEqual(['f1', 'f2']);
    const client = await mcpClient(home, { args: ['--allow-run'] });
    const dry = await callOk<{ dryRun: boolean; runs: { runId: string; outcome: string }[] }>(
      client,
      'retry_blocked',
      {
        failureClass: 'transient',
        labels: { team: 'growth' },
        dryRun: true,
      },
    );
    expect(dry.runs.map((run) => [run.runId, run.outcome]).sort()).toEqual([
      ['f1', 'would retry'],
      ['f2', 'would retry'],
    ]);
    const cancelled = await callOk<{ runs: { runId: string; outcome: string }[] }>(client, 'cancel_runs', {
      failureClass: 'fatal',
    });
    expect(cancelled.runs.map((run) => [run.runId, run.outcome])).toEqual([['s1', 'cancelled']]);
    expect(await status('s1')).toBe('cancelled');
    expect(await status('f1')).toBe('blocked');
  }, 180_000);
});
