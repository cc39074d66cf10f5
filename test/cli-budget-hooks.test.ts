/**
 * Budgets that stop runs and hooks that tell someone, end to end with the real `baton` binary:
 * an agent that reports its cost like `claude -p --output-format json`, a hook server on 127.0.0.1
 * and a hook command.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  agentCommand,
  batonJson,
  expectExit,
  fixture,
  removeTempDirs,
  runBaton,
  runStatus,
  sleep,
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

/** A hook endpoint that records every POST; the first `failures` calls answer 500. */
async function hookServer(
  failures = 0,
): Promise<{ url: string; calls: { hook: string; id: string; event: { type: string } }[] }> {
  const calls: { hook: string; id: string; event: { type: string } }[] = [];
  let failed = 0;
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      if (failed < failures) {
        failed++;
        response.statusCode = 500;
        response.end('down');
        return;
      }
      calls.push(JSON.parse(body));
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, calls };
}

const chain = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: `s${i + 1}`,
    instruction: `step ${i + 1}`,
    ...(i > 0 ? { dependsOn: [`s${i}`] } : {}),
  }));

/** A plan of one agent step that succeeds, with these hooks. */
const hookPlan = (dir: string, name: string, hooks: object[]) =>
  writePlan(dir, {
    name,
    defaults: { agent: { command: agentCommand('agent-succeed') } },
    hooks,
    steps: chain(1),
  });

describe('budgets and hooks', () => {
  it('maxCostUsd stops the run at the limit, not one step later; the hooks fire once per event', async () => {
    const hook = await hookServer();
    const { dir, home } = planDir();
    const countFile = join(dir, 'count.txt');
    const hookFile = join(dir, 'hooks.jsonl');
    const file = writePlan(dir, {
      name: 'costly',
      defaults: { agent: { command: agentCommand('agent-costly') } },
      limits: { maxCostUsd: 1.0 },
      hooks: [
        { on: ['budget', 'blocked'], url: hook.url },
        { on: ['failed', 'succeeded', 'blocked'], command: [process.execPath, fixture('hook-record')] },
      ],
      steps: chain(4),
    });
    const result = expectExit(
      await runBaton(['run', file, '--id', 'c1'], {
        home,
        env: { COUNT_FILE: countFile, HOOK_FILE: hookFile },
      }),
      1,
    );
    expect(readFileSync(countFile, 'utf8').trim().split('\n')).toEqual(['s1', 's2', 's3']);
    const run = await runStatus(home, 'c1');
    expect(run.status).toBe('blocked');
    expect(run.blockedReason).toMatch(
      /^budget: maxCostUsd \$1\.0000 reached \(\$1\.2000 used\); to allow as much again: baton resume c1$/,
    );
    const raw = await batonJson<{ usage: { costUsd: number; inputTokens: number } }>(
      ['status', 'c1'],
      { home },
      [1],
    );
    expect(raw.usage.costUsd).toBeCloseTo(1.2);
    expect(raw.usage.inputTokens).toBe(3000);
    expect(hook.calls.map((c) => c.event.type)).toEqual(['budget.exceeded', 'run.blocked']);
    expect(hook.calls[0]).toMatchObject({ hook: 'budget', id: expect.stringMatching(/^c1:\d+:0$/) });
    expect(result.stdout + result.stderr).toContain('budget: maxCostUsd');
    const recorded = readFileSync(hookFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(recorded.map((p) => p.event.type)).toEqual(['run.blocked']);
    expect(recorded[0].hint).toContain('baton status c1');
    // Another process looking at the same runs calls nothing again.
    expectExit(await runBaton(['check'], { home, env: { HOOK_FILE: hookFile } }), 1);
    expect(hook.calls).toHaveLength(2);
    expect(readFileSync(hookFile, 'utf8').trim().split('\n')).toHaveLength(1);
    // resume: as much again; the fourth step runs and the run succeeds.
    expectExit(await runBaton(['resume', 'c1'], { home }), 0);
    expectExit(await runBaton(['check'], { home, env: { COUNT_FILE: countFile, HOOK_FILE: hookFile } }), 0);
    expect(readFileSync(countFile, 'utf8').trim().split('\n')).toHaveLength(4);
    expect((await runStatus(home, 'c1')).status).toBe('succeeded');
    const succeeded = readFileSync(hookFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(succeeded.map((p) => p.event.type)).toEqual(['run.blocked', 'run.succeeded']);
  });

  it('a hook that fails is retried by the next process, and made once', async () => {
    const hook = await hookServer(1);
    const { dir, home } = planDir();
    const file = hookPlan(dir, 'flaky-hook', [{ on: ['succeeded'], url: hook.url, retries: 2 }]);
    expectExit(await runBaton(['run', file, '--id', 'h1'], { home }), 0);
    expect(hook.calls).toHaveLength(0);
    await sleep(1100);
    expectExit(await runBaton(['check'], { home }), 0);
    expect(hook.calls.map((c) => c.event.type)).toEqual(['run.succeeded']);
    expectExit(await runBaton(['check'], { home }), 0);
    expect(hook.calls).toHaveLength(1);
  });

  it('on: cancelled is called once per cancelled run, by baton cancel <run> and by a cancel with filters', async () => {
    const hook = await hookServer();
    const { dir, home } = planDir();
    const file = hookPlan(dir, 'cancellable', [{ on: ['cancelled', 'succeeded'], url: hook.url }]);
    for (const id of ['c1', 'c2', 'c3'])
      expectExit(await runBaton(['run', file, '--id', id, '--detach'], { home }), 0);
    expectExit(await runBaton(['cancel', 'c1'], { home }), 0);
    expectExit(await runBaton(['cancel', '--plan', 'cancellable'], { home }), 0);
    expectExit(await runBaton(['check'], { home }), 0);
    const calls = hook.calls.map((c) => [c.hook, c.event.type, (c as unknown as { runId: string }).runId]);
    expect(calls.sort()).toEqual([
      ['cancelled', 'run.cancelled', 'c1'],
      ['cancelled', 'run.cancelled', 'c2'],
      ['cancelled', 'run.cancelled', 'c3'],
    ]);
    expectExit(await runBaton(['check'], { home }), 0);
    expect(hook.calls).toHaveLength(3);
  });

  it('a step budget blocks that step alone, counted across its attempts', async () => {
    const { dir, home } = planDir();
    const countFile = join(dir, 'count.txt');
    const hook = await hookServer();
    const file = writePlan(dir, {
      name: 'step-budget',
      hooks: [{ on: ['budget'], url: hook.url }],
      defaults: {
        agent: { command: agentCommand('agent-costly') },
        retry: { maxAttempts: 5, initialDelayMs: 10, maxDelayMs: 20 },
      },
      steps: [
        { id: 'pricey', instruction: 'x', budget: { maxTokens: 2000 } },
        { id: 'other', instruction: 'y' },
      ],
    });
    expectExit(
      await runBaton(['run', file, '--id', 'b1'], {
        home,
        env: { COUNT_FILE: countFile, COSTLY_FAIL: 'pricey', BATON_PUBLIC_URL: '' },
      }),
      1,
    );
    // The budget hook names the step it blocked and how to go on (no public address: the commands).
    expect(hook.calls).toHaveLength(1);
    expect(hook.calls[0]).toMatchObject({
      hook: 'budget',
      title: 'Over budget: step-budget',
      blocked: { steps: [{ stepId: 'pricey', commands: ['baton retry b1 pricey', 'baton skip b1 pricey'] }] },
      commands: ['baton retry b1 pricey', 'baton skip b1 pricey'],
    });
    const run = await runStatus(home, 'b1');
    expect(run.steps.find((s) => s.stepId === 'other')?.status).toBe('succeeded');
    expect(run.steps.find((s) => s.stepId === 'pricey')).toMatchObject({
      status: 'blocked',
      lastFailureClass: 'budget',
    });
    expect(run.steps.find((s) => s.stepId === 'pricey')?.blockedReason).toContain(
      'step budget: maxTokens 2000 reached (2400 used)',
    );
    expect(
      readFileSync(countFile, 'utf8')
        .split('\n')
        .filter((line) => line === 'pricey'),
    ).toHaveLength(2);
  });

  it('a step whose retries are used up runs its fallback: it ends degraded and the run goes on', async () => {
    const { dir, home } = planDir();
    const file = writePlan(dir, {
      name: 'degrade',
      defaults: {
        agent: { command: agentCommand('agent-fail') },
        retry: { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 20 },
      },
      steps: [
        {
          id: 'draft',
          instruction: 'write it',
          fallback: {
            instruction: 'write a short plain version',
            agent: { command: agentCommand('agent-succeed') },
          },
        },
        {
          id: 'send',
          instruction: 'send {{steps.draft.summary}}',
          dependsOn: ['draft'],
          agent: { command: agentCommand('agent-succeed') },
        },
      ],
    });
    const result = expectExit(await runBaton(['run', file, '--id', 'd1'], { home }), 0);
    const run = await runStatus(home, 'd1');
    expect(run.status).toBe('succeeded');
    expect(run.steps.map((s) => [s.stepId, s.status])).toEqual([
      ['draft', 'degraded'],
      ['send', 'succeeded'],
    ]);
    const events = await timeline(home, 'd1');
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['step.fallback', 'step.degraded', 'run.succeeded']),
    );
    const text = await runBaton(['status', 'd1'], { home });
    expect(text.stdout).toMatch(/draft\s+degraded/);
    expect(result.stdout).toContain('degraded');
  });

  it('urlEnv: the hook URL comes from the environment at each call and is never stored', async () => {
    const hook = await hookServer();
    const token = 'HOOKTOKEN4242';
    const { dir, home } = planDir();
    const file = hookPlan(dir, 'env-hook', [{ on: ['succeeded'], urlEnv: 'BATON_TEST_HOOK_URL' }]);
    const env = { BATON_TEST_HOOK_URL: `${hook.url}?token=${token}` };
    const run = expectExit(await runBaton(['run', file, '--id', 'e1'], { home, env }), 0);
    expect(hook.calls.map((call) => call.event.type)).toEqual(['run.succeeded']);
    const status = await runBaton(['status', 'e1', '--json'], { home });
    expect(JSON.parse(status.stdout).plan.hooks[0]).toMatchObject({ urlEnv: 'BATON_TEST_HOOK_URL' });
    for (const result of [run, status]) expect(result.stdout + result.stderr).not.toContain(token);
    expect(readFileSync(join(home, 'baton.db')).includes(token)).toBe(false);
    // Without the variable the call fails, saying which variable is missing.
    const again = hookPlan(dir, 'env-hook-missing', [
      { on: ['succeeded'], urlEnv: 'BATON_TEST_HOOK_URL', retries: 0 },
    ]);
    const missing = expectExit(await runBaton(['run', again, '--id', 'e2'], { home }), 0);
    expect(missing.stderr).toContain(
      'hook 0 of run e2 failed for good: hook URL variable BATON_TEST_HOOK_URL is not set',
    );
  });

  it('refuses a hook URL holding a user name or password, before storing anything (exit 2)', async () => {
    const { dir, home } = planDir();
    const file = hookPlan(dir, 'userinfo-hook', [
      { on: ['succeeded'], url: 'https://bot:HOOKPASS123@127.0.0.1:1/x' },
    ]);
    const result = expectExit(await runBaton(['run', file], { home }), 2);
    expect(result.stderr).toContain('hooks[0].url');
    expect(result.stderr).toContain('cannot hold a user name or password');
    expect(existsSync(join(home, 'baton.db'))).toBe(false);
  });

  it('a hook that fails for good is reported as a hook failure, without its URL', async () => {
    const { dir, home } = planDir();
    const token = 'HOOKTOKEN999';
    // A port that was just free: nothing listens on it.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const file = hookPlan(dir, 'unreachable-hook', [
      { on: ['succeeded'], url: `http://127.0.0.1:${port}/x?token=${token}`, retries: 0 },
    ]);
    const result = expectExit(await runBaton(['run', file, '--id', 'u1'], { home }), 0);
    expect(result.stderr).toContain(
      `baton: hook 0 of run u1 failed for good: hook 127.0.0.1:${port} failed: fetch failed (ECONNREFUSED)`,
    );
    expect(result.stderr).not.toContain('store busy');
    expect(result.stderr).not.toContain(token);
    const db = new Database(join(home, 'baton.db'), { readonly: true });
    try {
      const errors = db.prepare('SELECT last_error FROM hook_deliveries').pluck().all() as string[];
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain('ECONNREFUSED');
      expect(errors[0]).not.toContain(token);
    } finally {
      db.close();
    }
  });

  it('refuses a hook that would run a shell, before storing anything (exit 2)', async () => {
    const { dir, home } = planDir();
    const file = hookPlan(dir, 'bad-hook', [{ on: ['blocked'], command: ['sh', '-c', 'curl x'] }]);
    const result = expectExit(await runBaton(['run', file], { home }), 2);
    expect(result.stderr).toMatch(/sh/);
    expect(existsSync(join(home, 'baton.db'))).toBe(false);
  });
});
