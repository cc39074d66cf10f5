/**
 * Notifications that carry their actions, end to end: the real `baton` runs a plan whose hooks
 * post to a receiver on 127.0.0.1 in Slack, Discord, Feishu and ntfy form (each checked against
 * that service's documented shape, test/helpers/webhook-shapes.ts), and the links in them, POSTed
 * to a real `baton serve`, retry, skip and approve the steps, once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  agentCommand,
  expectExit,
  removeTempDirs,
  runBaton,
  runStatus,
  spawnBaton,
  stopProcesses,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir, stepOf } from './helpers/plans.js';
import {
  type ActionLink,
  checkDiscordMessage,
  checkFeishuMessage,
  checkNtfyMessage,
  checkSlackMessage,
} from './helpers/webhook-shapes.js';

const servers: Server[] = [];
afterEach(async () => {
  await stopProcesses();
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});
afterAll(() => removeTempDirs());

interface Received {
  path: string;
  body: Record<string, unknown>;
}

/**
 * A receiver for every service: records the path and JSON body of each POST; answers as Feishu
 * does. `refuseFirst`: the first call to that path is answered 500 and not recorded (the sender
 * calls again later).
 */
async function receiver(refuseFirst?: string): Promise<{ origin: string; calls: Received[] }> {
  const calls: Received[] = [];
  let refused = false;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      if (request.url === refuseFirst && !refused) {
        refused = true;
        response.statusCode = 500;
        response.end();
        return;
      }
      calls.push({ path: request.url ?? '', body: JSON.parse(body) });
      response.setHeader('content-type', 'application/json');
      response.end('{"code":0,"msg":"success"}');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

/** The four services' hooks (ntfy's URL is the topic's: it is posted to the server's root). */
function hooks(origin: string) {
  const on = ['blocked', 'waiting'];
  return [
    { on, url: `${origin}/slack`, format: 'slack' },
    { on, url: `${origin}/discord`, format: 'discord' },
    { on, url: `${origin}/feishu`, format: 'feishu' },
    { on, url: `${origin}/baton-alerts`, format: 'ntfy' },
    { on: [...on, 'succeeded'], url: `${origin}/json` },
    // On a failed attempt alone: the failure that blocks a step carries its answers too.
    { on: ['failed'], url: `${origin}/failed`, format: 'slack' },
  ];
}

/** Each service's payload among `calls` (the newest), checked against its documented shape. */
function byService(calls: readonly Received[]) {
  const last = (path: string) => {
    const found = calls.findLast((call) => call.path === path);
    if (!found) throw new Error(`no call to ${path} among ${calls.map((c) => c.path).join(', ')}`);
    return found.body;
  };
  const ntfy = last('/');
  expect(ntfy.topic).toBe('baton-alerts');
  return {
    slack: checkSlackMessage(last('/slack')),
    discord: checkDiscordMessage(last('/discord')),
    feishu: checkFeishuMessage(last('/feishu')),
    ntfy: checkNtfyMessage(ntfy),
    ntfyBody: ntfy,
    json: last('/json'),
    slackBody: last('/slack'),
  };
}

function link(links: readonly ActionLink[], label: string): string {
  const found = links.find((l) => l.label === label);
  if (!found) throw new Error(`no link "${label}" among ${links.map((l) => l.label).join(', ')}`);
  return found.url;
}

/** A real `baton serve` over `home`: its origin, and what it printed so far. */
async function serve(home: string): Promise<{ origin: string; printed: () => string }> {
  const serving = spawnBaton(['serve'], { home });
  const origin = await waitFor(
    () => /open (http:\/\/127\.0\.0\.1:\d+)\//.exec(serving.stdout())?.[1],
    20_000,
    'baton serve',
  );
  return { origin, printed: () => serving.stdout() + serving.stderr() };
}

const post = (url: string) => fetch(url, { method: 'POST' });

describe('hooks with format: slack | discord | feishu | ntfy', () => {
  it('a blocked step: each service gets its own shape with retry and skip links that baton serve honours once', async () => {
    const hook = await receiver();
    const { dir, home } = planDir('baton-hook-formats-');
    const plan = fixturePlan(
      [{ id: 'fetch', instruction: 'fetch it', agent: { command: agentCommand('agent-fail') } }],
      {
        hooks: hooks(hook.origin),
        defaults: { retry: { maxAttempts: 1 } },
      },
    );
    expectExit(await runBaton(['run', writePlan(dir, plan), '--detach', '--id', 'b1'], { home }), 0);
    const { origin, printed } = await serve(home);
    const env = { BATON_PUBLIC_URL: origin };
    // `check` exits 1 while a run is blocked.
    const check = expectExit(await runBaton(['check'], { home, env }), 1);
    expect(stepOf(await runStatus(home, 'b1'), 'fetch').status).toBe('blocked');

    const first = byService(hook.calls);
    // Every service carries the same two capability URLs and the run's page.
    const retry = link(first.slack, 'Retry fetch');
    const skip = link(first.slack, 'Skip fetch');
    expect(retry).toMatch(new RegExp(`^${origin}/blocked/b1/fetch/[A-Za-z0-9_-]{54}/retry$`));
    expect(Buffer.from(retry.split('/').at(-2)!, 'base64url').length).toBeGreaterThanOrEqual(16);
    for (const links of [first.discord, first.feishu])
      expect([link(links, 'Retry fetch'), link(links, 'Skip fetch'), link(links, 'Open in Baton')]).toEqual([
        retry,
        skip,
        `${origin}/runs/b1`,
      ]);
    expect(first.ntfy).toEqual([
      { action: 'http', label: 'Retry fetch', url: retry, method: 'POST' },
      { action: 'http', label: 'Skip fetch', url: skip, method: 'POST' },
      { action: 'view', label: 'Open in Baton', url: `${origin}/runs/b1` },
    ]);
    expect(first.ntfyBody.click).toBe(`${origin}/runs/b1`);
    const failed = checkSlackMessage(hook.calls.find((call) => call.path === '/failed')!.body);
    expect(failed.map((l) => [l.label, l.url])).toEqual([
      ['Retry fetch', retry],
      ['Skip fetch', skip],
      ['Open in Baton', `${origin}/runs/b1`],
    ]);
    expect(String(first.slackBody.text)).toContain('Run b1 is blocked');
    // json: today's payload plus the same links.
    expect(first.json).toMatchObject({
      hook: 'blocked',
      runId: 'b1',
      consoleUrl: `${origin}/runs/b1`,
      blocked: { steps: [{ stepId: 'fetch', urls: { retry, skip } }] },
    });

    // A GET (a chat button opening a browser) asks, and changes nothing.
    const page = await fetch(retry);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Retry step fetch of run b1?');
    expect(stepOf(await runStatus(home, 'b1'), 'fetch').status).toBe('blocked');

    const retried = await post(retry);
    expect(retried.status).toBe(200);
    expect(await retried.json()).toMatchObject({
      ok: true,
      runId: 'b1',
      stepId: 'fetch',
      outcome: 'retried',
    });
    expect(stepOf(await runStatus(home, 'b1'), 'fetch').status).toBe('ready');
    // Used: neither it nor the skip URL of the same block works any more.
    expect((await post(retry)).status).toBe(404);
    expect((await post(skip)).status).toBe(404);

    // It runs and blocks again: new URLs; ntfy's http action (a POST without a body) skips it.
    const before = hook.calls.length;
    expectExit(await runBaton(['check'], { home, env }), 1);
    expect(hook.calls.length).toBeGreaterThan(before);
    const second = byService(hook.calls.slice(before));
    const ntfySkip = second.ntfy.find((a) => a.label === 'Skip fetch')!.url;
    expect(ntfySkip).not.toBe(skip);
    expect((await post(skip)).status).toBe(404);
    const skipped = await post(ntfySkip);
    expect(skipped.status).toBe(200);
    expect(await skipped.json()).toMatchObject({ outcome: 'skipped' });
    expectExit(await runBaton(['check'], { home, env }), 0);
    expect((await runStatus(home, 'b1')).status).toBe('succeeded');
    // The tokens are in the hooks' bodies alone: neither the sender nor the server prints them.
    for (const url of [retry, skip, ntfySkip]) {
      const token = url.split('/').at(-2)!;
      expect(check.stdout + check.stderr + printed()).not.toContain(token);
    }
    const timelineText = JSON.stringify(await runBaton(['timeline', 'b1', '--json'], { home }));
    expect(timelineText).not.toContain(retry.split('/').at(-2)!);
    expect(hook.calls.at(-1)!.body).toMatchObject({
      hook: 'succeeded',
      consoleUrl: `${origin}/runs/b1`,
      actions: [{ kind: 'open' }],
    });
  });

  it('a waiting step: approve and reject links in each shape; the Feishu button approves, the others are spent', async () => {
    const hook = await receiver();
    const { dir, home } = planDir('baton-hook-formats-');
    const plan = fixturePlan(
      [
        { id: 'gate', wait: { for: 'approval', prompt: 'Ship {{inputs.v}}?' } },
        { id: 'ship', instruction: 'ship it', dependsOn: ['gate'] },
      ],
      { hooks: hooks(hook.origin), inputs: { v: { default: '1.2' } } },
    );
    expectExit(await runBaton(['run', writePlan(dir, plan), '--detach', '--id', 'w1'], { home }), 0);
    const { origin } = await serve(home);
    const env = { BATON_PUBLIC_URL: origin };
    expectExit(await runBaton(['check'], { home, env }), 0);
    const got = byService(hook.calls);
    const approve = link(got.feishu, 'Approve gate');
    const reject = link(got.feishu, 'Reject gate');
    expect(approve).toMatch(new RegExp(`^${origin}/wait/w1/gate/[A-Za-z0-9_-]{54}/approve$`));
    for (const links of [got.slack, got.discord, got.ntfy])
      expect([link(links, 'Approve gate'), link(links, 'Reject gate')]).toEqual([approve, reject]);
    expect(String(got.slackBody.text)).toContain('Ship 1.2?');
    expect(got.json).toMatchObject({
      hook: 'waiting',
      waiting: { stepId: 'gate', urls: { approve, reject } },
    });

    const page = await fetch(approve, { headers: { accept: 'text/html' } });
    expect(await page.text()).toContain('Approve step gate of run w1?');
    expect(stepOf(await runStatus(home, 'w1'), 'gate').status).toBe('waiting');
    const approved = await post(approve);
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ outcome: 'approved' });
    expect((await post(reject)).status).toBe(404);
    expect(stepOf(await runStatus(home, 'w1'), 'gate').status).toBe('succeeded');
  });

  it('without a public address the messages carry the commands instead, and no link', async () => {
    const hook = await receiver();
    const { dir, home } = planDir('baton-hook-formats-');
    const plan = fixturePlan(
      [{ id: 'fetch', instruction: 'fetch it', agent: { command: agentCommand('agent-fail') } }],
      {
        hooks: hooks(hook.origin),
        defaults: { retry: { maxAttempts: 1 } },
      },
    );
    expectExit(await runBaton(['run', writePlan(dir, plan), '--detach', '--id', 'c1'], { home }), 0);
    expectExit(await runBaton(['check'], { home, env: { BATON_PUBLIC_URL: '' } }), 1);
    const got = byService(hook.calls);
    for (const links of [got.slack, got.discord, got.feishu, got.ntfy]) expect(links).toEqual([]);
    expect(JSON.stringify(got.slackBody)).toContain('baton retry c1 fetch');
    expect(String(got.ntfyBody.message)).toContain('baton skip c1 fetch');
    expect(got.json).toMatchObject({
      consoleUrl: null,
      commands: ['baton retry c1 fetch', 'baton skip c1 fetch'],
      blocked: { steps: [{ stepId: 'fetch', commands: ['baton retry c1 fetch', 'baton skip c1 fetch'] }] },
    });
  });

  it("a failed hook delivered late, after a later attempt blocked the step, carries no links; that attempt's does", async () => {
    // The first failed hook (attempt 1, which Baton will try again) is refused and delivered again
    // after attempt 2 failed and blocked the step.
    const hook = await receiver('/failed');
    const { dir, home } = planDir('baton-hook-formats-');
    const plan = fixturePlan(
      [{ id: 'fetch', instruction: 'fetch it', agent: { command: agentCommand('agent-fail') } }],
      {
        hooks: [{ on: ['failed'], url: `${hook.origin}/failed`, format: 'slack' }],
        defaults: { retry: { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 20 } },
      },
    );
    expectExit(await runBaton(['run', writePlan(dir, plan), '--detach', '--id', 'l1'], { home }), 0);
    const env = { BATON_PUBLIC_URL: 'https://baton.example.com' };
    const about = (attempt: number) =>
      hook.calls.find((call) => String(call.body.text).includes(`Attempt ${attempt} of step fetch`));
    await waitFor(
      async () => {
        await runBaton(['check'], { home, env });
        return about(1) && about(2);
      },
      60_000,
      'both failed hooks delivered',
    );
    expect(stepOf(await runStatus(home, 'l1'), 'fetch').status).toBe('blocked');
    const labels = (attempt: number) => checkSlackMessage(about(attempt)!.body).map((l) => l.label);
    expect(labels(2)).toEqual(['Retry fetch', 'Skip fetch', 'Open in Baton']);
    expect(labels(1)).toEqual(['Open in Baton']);
    expect(String(about(1)!.body.text)).toContain('Baton tries it again');
  });
});
