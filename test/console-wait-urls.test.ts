/**
 * Capability URLs of waiting steps: the console's inbox shows them, a POST without a session
 * answers the wait once, and every refusal (wrong token, unknown step, used URL, wrong action) is
 * the same 404. Hooks with `on: waiting` carry the same URLs (BATON_PUBLIC_URL) or the commands.
 */
import { readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console/console-server.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import {
  expectExit,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  tempDir,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { csrfOf, startTestConsole, withSession } from './helpers/console.js';
import { fixturePlan, planDir } from './helpers/plans.js';

const opened: { console?: RunningConsole; store?: SqliteStore; server?: Server }[] = [];
afterEach(async () => {
  await stopProcesses();
  for (const item of opened.splice(0)) {
    await item.console?.close();
    await item.store?.close();
    if (item.server) await new Promise((resolve) => item.server!.close(resolve));
  }
});
afterAll(() => removeTempDirs());

const WAIT_PLAN = {
  name: 'gated',
  steps: [
    { id: 'gate', wait: { for: 'approval', prompt: 'Ship {{inputs.v}}?' } },
    { id: 'ship', fn: 'noop', dependsOn: ['gate'] },
    {
      id: 'deployed',
      wait: {
        for: 'event',
        event: 'deploy-done',
        schema: { type: 'object', required: ['version'], properties: { version: { type: 'string' } } },
      },
    },
  ],
  inputs: { v: { default: '1.2' } },
};

/** A console over a store holding run `r1` whose `gate` and `deployed` steps wait. */
async function waitingConsole() {
  const home = join(tempDir('baton-wait-urls-'), 'home');
  const store = SqliteStore.open(join(home, 'baton.db'));
  const console = await startTestConsole(store, home);
  opened.push({ console, store });
  const plan = validatePlanObject(WAIT_PLAN, 'gated');
  await store.createRun({ id: 'r1', plan, planHash: 'h', inputs: { v: '1.2' }, workspace: home, now: 1000 });
  await store.cycle({
    owner: 'w1',
    now: 1000,
    leaseMs: 60_000,
    completions: [],
    claimLimit: 4,
    random: () => 0,
  });
  const inbox = await (await fetch(`${console.origin}/inbox`, { headers: withSession() })).text();
  const urls = [
    ...inbox.matchAll(/<b>(approve|reject|event)<\/b> <code class="capability-url">([^<]+)<\/code>/g),
  ];
  const url = (action: string) => urls.find((m) => m[1] === action)?.[2] ?? '';
  const status = async (stepId: string) =>
    (await store.getRun('r1'))!.steps.find((s) => s.stepId === stepId)!.status;
  return { home, store, console, inbox, url, status };
}

const post = (url: string, body?: string, type = 'application/json') =>
  fetch(url, { method: 'POST', body, headers: body === undefined ? {} : { 'content-type': type } });

describe('capability URLs of waiting steps (baton serve)', () => {
  it('the inbox shows the waiting steps with one URL per answer, each token at least 128 bits', async () => {
    const { console, inbox, url } = await waitingConsole();
    expect(inbox).toContain('Ship 1.2?');
    expect(inbox).toContain('deploy-done');
    for (const action of ['approve', 'reject', 'event']) {
      const token = url(action).split('/').at(-2)!;
      expect(url(action).startsWith(`${console.origin}/wait/r1/`)).toBe(true);
      expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(16);
    }
    expect(new Set([url('approve'), url('reject'), url('event')]).size).toBe(3);
  });

  it('approves once without a session; used again, or with a wrong token or step, it is the same 404', async () => {
    const { home, console, url, status, store } = await waitingConsole();
    const approve = url('approve');
    const token = approve.split('/').at(-2)!;
    const wrongToken = approve.replace(token, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`);
    const refusals = [
      await post(wrongToken),
      await post(approve.replace('/gate/', '/nosuch/')),
      await post(`${console.origin}/wait/nosuchrun/gate/${token}/approve`),
      // The approve token does not reject.
      await post(approve.replace(/\/approve$/, '/reject')),
    ];
    const first = await refusals[0]!.text();
    expect(JSON.parse(first).error).toContain('no waiting step answers to this URL');
    for (const refused of refusals) {
      expect(refused.status).toBe(404);
      expect(refused.bodyUsed ? first : await refused.text()).toBe(first);
    }
    expect(await status('gate')).toBe('waiting');

    const answer = await post(approve, JSON.stringify({ comment: 'looks good' }));
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ ok: true, runId: 'r1', stepId: 'gate', outcome: 'approved' });
    expect(await status('gate')).toBe('succeeded');
    const approved = (await store.getEvents('r1')).find((e) => e.type === 'step.approved');
    expect(approved).toMatchObject({ by: 'capability URL', comment: 'looks good' });

    const again = await post(approve);
    expect(again.status).toBe(404);
    expect(await again.text()).toBe(first);
    // The reject URL of the same wait is spent too: the wait is over.
    expect((await post(url('reject'))).status).toBe(404);
    // Nothing of the token is stored; the key file is the operator's alone.
    expect(readFileSync(join(home, 'baton.db')).includes(token)).toBe(false);
    expect(statSync(join(home, 'wait-url.key')).mode & 0o077).toBe(0);
  });

  it("delivers an event's payload once, refusing one that does not match wait.schema", async () => {
    const { url, status } = await waitingConsole();
    const bad = await post(url('event'), JSON.stringify({ version: 3 }));
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toContain('wait.schema');
    expect(await status('deployed')).toBe('waiting');
    const good = await post(url('event'), JSON.stringify({ version: '1.2' }));
    expect(good.status).toBe(200);
    expect(await status('deployed')).toBe('succeeded');
    expect((await post(url('event'), JSON.stringify({ version: '1.3' }))).status).toBe(404);
  });

  it("a waiting step's page answers it: the event's payload sent with the session and CSRF token", async () => {
    const { console, status, store } = await waitingConsole();
    const page = await (
      await fetch(`${console.origin}/runs/r1/steps/deployed`, { headers: withSession() })
    ).text();
    expect(page).toContain('Waits for event');
    expect(page).toContain('data-action="send"');
    const csrf = await csrfOf(console.origin, '/runs/r1/steps/deployed');
    const sent = await fetch(`${console.origin}/runs/r1/steps/deployed/send`, {
      method: 'POST',
      redirect: 'manual',
      headers: withSession({ 'content-type': 'application/x-www-form-urlencoded' }),
      body: new URLSearchParams({ csrf, back: 'step', payload: '{"version":"2.0"}' }).toString(),
    });
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe('/runs/r1/steps/deployed');
    expect(await status('deployed')).toBe('succeeded');
    const result = (await store.getRun('r1'))!.steps.find((s) => s.stepId === 'deployed')!.resultJson;
    expect(JSON.parse(result!).value).toEqual({ version: '2.0' });
  });

  it('baton serve --public-url: refuses one that is not an http(s) address (exit 2); says where the URLs start', async () => {
    const home = tempDir('baton-serve-public-');
    expectExit(await runBaton(['flow', 'set', 'k', '--concurrency', '1'], { home }), 0);
    const refused = expectExit(
      await runBaton(['serve', '--public-url', 'ftp://baton.example.com'], { home }),
      2,
    );
    expect(refused.stderr).toContain('--public-url: expected an http(s) address');
    const serving = spawnBaton(['serve', '--public-url', 'https://baton.example.com/'], { home });
    const line = await waitFor(
      () => /capability URLs start with (\S+)/.exec(serving.stdout())?.[1],
      20_000,
      'the line',
    );
    expect(line).toBe('https://baton.example.com/wait/');
    serving.child.kill('SIGTERM');
    expect((await serving.exited).code).toBe(0);
  });
});

/** What a hook about a waiting step receives (the fields these tests read). */
interface WaitingHookCall {
  hook: string;
  runId: string;
  waiting: { stepId: string; urls?: Record<string, string>; commands?: string[] };
}

/** A hook endpoint that records every POST body. */
async function hookReceiver(): Promise<{ url: string; calls: WaitingHookCall[] }> {
  const calls: WaitingHookCall[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      calls.push(JSON.parse(body));
      response.end('ok');
    });
  });
  opened.push({ server });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, calls };
}

describe('hooks on: waiting', () => {
  const plan = (hookUrl: string) =>
    fixturePlan(
      [
        { id: 'draft', instruction: 'write it' },
        { id: 'gate', dependsOn: ['draft'], wait: { for: 'approval', prompt: 'Send it?' } },
      ],
      { hooks: [{ on: ['waiting'], url: hookUrl }] },
    );

  it('without a public address the payload carries the prompt and the exact commands', async () => {
    const hook = await hookReceiver();
    const { dir, home } = planDir();
    const file = writePlan(dir, plan(hook.url));
    expectExit(await runBaton(['run', file, '--detach', '--id', 'h1'], { home }), 0);
    expectExit(await runBaton(['check'], { home, env: { BATON_PUBLIC_URL: '' } }), 0);
    expect(hook.calls).toHaveLength(1);
    expect(hook.calls[0]).toMatchObject({
      hook: 'waiting',
      runId: 'h1',
      waiting: {
        stepId: 'gate',
        for: 'approval',
        prompt: 'Send it?',
        commands: ["baton approve h1 gate --comment '...'", "baton reject h1 gate --comment '...'"],
      },
    });
    expect(hook.calls[0]!.waiting.urls).toBeUndefined();
  });

  it("with BATON_PUBLIC_URL it carries the URLs, which baton serve's console over the same home accepts once", async () => {
    const hook = await hookReceiver();
    const { dir, home } = planDir();
    const file = writePlan(dir, plan(hook.url));
    expectExit(await runBaton(['run', file, '--detach', '--id', 'h2'], { home }), 0);
    const store = SqliteStore.open(join(home, 'baton.db'));
    const console = await startTestConsole(store, home);
    opened.push({ console, store });
    const check = expectExit(
      await runBaton(['check'], { home, env: { BATON_PUBLIC_URL: `${console.origin}/` } }),
      0,
    );
    expect(hook.calls).toHaveLength(1);
    const { urls, commands } = hook.calls[0]!.waiting;
    expect(commands).toBeUndefined();
    if (!urls) throw new Error('the payload carries no URLs');
    expect(Object.keys(urls)).toEqual(['approve', 'reject']);
    expect(urls.approve.startsWith(`${console.origin}/wait/h2/gate/`)).toBe(true);
    // Never printed or logged by the process that sent it.
    expect(check.stdout + check.stderr).not.toContain(urls.approve.split('/').at(-2));
    expect((await post(urls.reject, 'not now', 'text/plain')).status).toBe(200);
    expect((await post(urls.reject)).status).toBe(404);
    const events = await store.getEvents('h2');
    expect(events.find((e) => e.type === 'step.rejected')).toMatchObject({ comment: 'not now' });
  });
});
