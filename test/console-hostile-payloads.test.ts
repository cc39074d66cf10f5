/**
 * A hostile event payload through a capability URL of the real `baton serve`: a `wait.schema`
 * pattern `^(a+)+$` against `"a"*40 + "!"` used to freeze the server for every user and every URL
 * (JavaScript's backtracking RegExp). It runs in a linear-time engine now: the payload is refused
 * (400, nothing stored), and a second URL and the console answer after it. No timing asserted: a
 * frozen server makes the requests below wait until Vitest's timeout.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
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

const servers: Server[] = [];
afterEach(async () => {
  await stopProcesses();
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});
afterAll(() => removeTempDirs());

interface WaitingCall {
  waiting: { stepId: string; urls?: Record<string, string> };
}

/** A hook endpoint that records the `on: waiting` calls. */
async function hookReceiver(): Promise<{ url: string; calls: WaitingCall[] }> {
  const calls: WaitingCall[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      calls.push(JSON.parse(body) as WaitingCall);
      response.end('ok');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, calls };
}

describe('baton serve under a hostile event payload', () => {
  it('refuses a ReDoS payload against wait.schema and stays responsive for a second URL and the console', async () => {
    const { dir, home } = planDir('baton-hostile-payload-');
    const token = 't'.repeat(40);
    const tokenFile = join(dir, 'console-token');
    writeFileSync(tokenFile, token, { mode: 0o600 });
    const hook = await hookReceiver();
    const plan = fixturePlan(
      [
        {
          id: 'deployed',
          wait: {
            for: 'event',
            event: 'deploy-done',
            schema: { type: 'object', properties: { v: { type: 'string', pattern: '^(a+)+$' } } },
          },
        },
        { id: 'gate', wait: { for: 'approval', prompt: 'Ship it?' } },
      ],
      { hooks: [{ on: ['waiting'], url: hook.url }] },
    );
    const file = writePlan(dir, plan);
    expectExit(await runBaton(['run', file, '--detach', '--id', 'r1'], { home }), 0);
    const serving = spawnBaton(['serve', '--token-file', tokenFile], { home });
    const origin = await waitFor(
      () => /(http:\/\/127\.0\.0\.1:\d+)\//.exec(serving.stdout())?.[1],
      20_000,
      'the address',
    );
    expectExit(await runBaton(['check'], { home, env: { BATON_PUBLIC_URL: `${origin}/` } }), 0);
    const urls = (stepId: string) => hook.calls.find((call) => call.waiting.stepId === stepId)?.waiting.urls;
    const eventUrl = urls('deployed')?.event;
    const approveUrl = urls('gate')?.approve;
    if (!eventUrl || !approveUrl) throw new Error(`no capability URLs in ${JSON.stringify(hook.calls)}`);

    const hostile = await fetch(eventUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ v: `${'a'.repeat(40)}!` }),
    });
    expect(hostile.status).toBe(400);
    expect(((await hostile.json()) as { error: string }).error).toContain('must match pattern "^(a+)+$"');

    const approved = await fetch(approveUrl, { method: 'POST' });
    expect(approved.status).toBe(200);
    const page = await fetch(`${origin}/`, { headers: { authorization: `Bearer ${token}` } });
    expect(page.status).toBe(200);

    const run = await runStatus(home, 'r1');
    expect(stepOf(run, 'deployed').status).toBe('waiting');
    expect(stepOf(run, 'gate').status).toBe('succeeded');
    serving.child.kill('SIGTERM');
    expect((await serving.exited).code).toBe(0);
  });
});
