/**
 * Tool calls a running agent waits on a person for (`agent.approve`), at the doors other than the
 * CLI's `approve --tool`: the console inbox (its forms, with the session), the calls' capability
 * URLs (no session, once, the same 404 for anything wrong) and `baton check`. The held call is the
 * event the worker's relay records (test/agent-tool-approvals.test.ts drives the real claude CLI
 * through all of it); here it is appended to a real store whose step runs under a live lease.
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console/console-server.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { expectExit, removeTempDirs, runBaton, tempDir } from './helpers/cli.js';
import { csrfOf, startTestConsole, withSession } from './helpers/console.js';

const opened: { console: RunningConsole; store: SqliteStore }[] = [];
afterEach(async () => {
  for (const item of opened.splice(0)) {
    await item.console.close();
    await item.store.close();
  }
});
afterAll(() => removeTempDirs());

const PLAN = {
  name: 'release',
  steps: [
    {
      id: 'push',
      instruction: 'push the branch',
      agent: { command: ['claude', '-p'], approve: [{ tool: 'Bash', match: 'git push*' }] },
    },
  ],
};

/** A store whose run `r1` has step `push` running (its lease live for an hour) with calls held. */
async function heldCalls(callIds: string[]) {
  const home = join(tempDir('baton-tool-calls-'), 'home');
  const store = SqliteStore.open(join(home, 'baton.db'));
  const now = Date.now();
  const plan = validatePlanObject(PLAN, 'release');
  await store.createRun({ id: 'r1', plan, planHash: 'h', inputs: {}, workspace: home, now });
  await store.cycle({
    owner: 'w1',
    now,
    leaseMs: 3_600_000,
    completions: [],
    claimLimit: 1,
    random: () => 0,
  });
  await store.appendEvents(
    'r1',
    callIds.map((callId, i) => ({
      type: 'step.tool_approval_requested' as const,
      stepId: 'push',
      attempt: 1,
      callId,
      tool: 'Bash',
      digest: 'a'.repeat(64),
      summary: `git push --force origin b${i}`,
      timeoutAt: now + 3_600_000,
    })),
    now,
  );
  const console = await startTestConsole(store, home);
  opened.push({ console, store });
  const inbox = async () => (await fetch(`${console.origin}/inbox`, { headers: withSession() })).text();
  const urlsOf = (page: string, callId: string) => {
    const item = page
      .split('<li class="inbox-item tool-call"')
      .find((part) => part.includes(`data-call="${callId}"`));
    const found = [
      ...(item ?? '').matchAll(/<b>(approve|reject)<\/b> <code class="capability-url">([^<]+)<\/code>/g),
    ];
    return Object.fromEntries(found.map((m) => [m[1], m[2]])) as { approve?: string; reject?: string };
  };
  const decided = async () =>
    (await store.getEvents('r1')).filter((e) => e.type === 'step.tool_approval_decided');
  return { home, store, console, inbox, urlsOf, decided };
}

const post = (url: string, body?: string, type = 'application/json') =>
  fetch(url, { method: 'POST', body, headers: body === undefined ? {} : { 'content-type': type } });

describe('held tool calls in the console', () => {
  it('the inbox lists each held call with what it would run; its form answers it with the session', async () => {
    const { console, inbox, decided } = await heldCalls(['toolu_a', 'toolu_b']);
    const page = await inbox();
    expect(page).toContain('id="tool-call-count">2<');
    expect(page).toContain('git push --force origin b0');
    expect(page).toContain('data-call="toolu_b"');
    const csrf = await csrfOf(console.origin, '/inbox');
    const answer = await fetch(`${console.origin}/runs/r1/steps/push/approve-tool`, {
      method: 'POST',
      redirect: 'manual',
      headers: withSession({ 'content-type': 'application/x-www-form-urlencoded' }),
      body: new URLSearchParams({ csrf, back: 'inbox', tool: 'toolu_a', comment: 'release day' }).toString(),
    });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/inbox');
    expect(await decided()).toEqual([
      expect.objectContaining({ callId: 'toolu_a', decision: 'allow', comment: 'release day' }),
    ]);
    const after = await inbox();
    expect(after).not.toContain('data-call="toolu_a"');
    expect(after).toContain('data-call="toolu_b"');
    // Without the CSRF token nothing is answered.
    const forged = await fetch(`${console.origin}/runs/r1/steps/push/reject-tool`, {
      method: 'POST',
      redirect: 'manual',
      headers: withSession({ 'content-type': 'application/x-www-form-urlencoded' }),
      body: new URLSearchParams({ back: 'inbox', tool: 'toolu_b' }).toString(),
    });
    expect(forged.status).toBe(403);
    expect(await decided()).toHaveLength(1);
  });

  it("a call's capability URL answers it once without a session; anything wrong is the same 404", async () => {
    const { console, inbox, urlsOf, decided } = await heldCalls(['toolu_a', 'toolu_b']);
    const page = await inbox();
    const a = urlsOf(page, 'toolu_a');
    const b = urlsOf(page, 'toolu_b');
    expect(a.approve?.startsWith(`${console.origin}/tool/r1/push/`)).toBe(true);
    // One URL per call and answer.
    expect(new Set([a.approve, a.reject, b.approve, b.reject]).size).toBe(4);
    const token = a.reject!.split('/').at(-2)!;
    const refusals = [
      await post(a.reject!.replace(token, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)),
      await post(a.reject!.replace('/push/', '/other/')),
      await post(a.reject!.replace(/\/reject$/, '/approve')),
      await post(a.reject!.replace('/tool/', '/wait/')),
    ];
    for (const refused of refusals) expect(refused.status).toBe(404);
    // A GET (a chat button opening a browser) asks first and changes nothing.
    const asked = await fetch(a.reject!);
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain('Deny the tool call the agent of step push of run r1 waits on?');
    expect(await decided()).toEqual([]);

    const denied = await post(a.reject!, JSON.stringify({ comment: 'not on main' }));
    expect(denied.status).toBe(200);
    expect(await denied.json()).toMatchObject({ ok: true, runId: 'r1', stepId: 'push', outcome: 'denied' });
    expect(await decided()).toEqual([
      expect.objectContaining({
        callId: 'toolu_a',
        decision: 'deny',
        by: 'capability URL',
        comment: 'not on main',
      }),
    ]);
    // Used: both of its URLs are spent; the other call's still work.
    expect((await post(a.reject!)).status).toBe(404);
    expect((await post(a.approve!)).status).toBe(404);
    expect((await post(b.approve!)).status).toBe(200);
    expect((await decided()).map((e) => e.callId)).toEqual(['toolu_a', 'toolu_b']);
  });
});

describe('held tool calls in baton check', () => {
  it('lists each with the commands that answer it, in text and JSON, while nothing is due (exit 0)', async () => {
    const { home } = await heldCalls(['toolu_a']);
    const text = expectExit(await runBaton(['check'], { home }), 0);
    expect(text.stdout).toContain(
      'WAITING run r1 (release): push is waiting for tool approval: Bash "git push --force origin b0" (call toolu_a;',
    );
    expect(text.stdout).toContain('  baton approve r1 push --tool toolu_a\n');
    expect(text.stdout).toContain("  baton reject r1 push --tool toolu_a --comment '...'\n");
    const json = JSON.parse(expectExit(await runBaton(['check', '--json'], { home }), 0).stdout);
    expect(json.toolApprovals).toEqual([
      expect.objectContaining({
        runId: 'r1',
        planName: 'release',
        stepId: 'push',
        callId: 'toolu_a',
        tool: 'Bash',
      }),
    ]);
    expectExit(await runBaton(['approve', 'r1', 'push', '--tool', 'toolu_a'], { home }), 0);
    const after = expectExit(await runBaton(['check'], { home }), 0);
    expect(after.stdout).not.toContain('tool approval');
  });
});
