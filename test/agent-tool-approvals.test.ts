/**
 * Tool approvals inside a running agent (`agent.approve`), with the real claude CLI against
 * `baton mock-llm`, whose script makes the model call Bash with `git push --force`: the call waits
 * for a person while the agent keeps its session; `approve --tool` lets it run (the model sees what
 * git printed), `reject --tool` sends the model a denial and the turn goes on, a timeout denies.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console/console-server.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { agentTurn, type CliCase, cliCase, cliCommand, mockPerTest } from './helpers/agent-steps.js';
import {
  type BatonProcess,
  batonJson,
  expectExit,
  runBaton,
  runStatus,
  spawnBaton,
  stopProcesses,
  timeline,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { startTestConsole, withSession } from './helpers/console.js';
import { callOk, closeClients, mcpClient } from './helpers/mcp.js';

const startServer = mockPerTest();
const opened: { console?: RunningConsole; store?: SqliteStore; server?: Server }[] = [];
afterEach(async () => {
  await closeClients();
  await stopProcesses();
  for (const item of opened.splice(0)) {
    await item.console?.close();
    await item.store?.close();
    if (item.server) await new Promise((resolve) => item.server!.close(resolve));
  }
});

interface HookBody {
  hook: string;
  waiting?: { for: string; urls?: { approve: string; reject: string } };
}

/** An HTTP hook on 127.0.0.1 that keeps every body it is sent. */
async function hookReceiver(): Promise<{ url: string; calls: HookBody[] }> {
  const calls: HookBody[] = [];
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

/** The model pushes with Bash, then, once it has the tool's result, says it is done. */
const pushScript = [
  {
    fault: 'ok' as const,
    when: agentTurn('push the branch', { hasToolResult: false }),
    reply: { toolCalls: [{ name: 'Bash', arguments: { command: 'git push --force', description: 'push' } }] },
  },
  {
    fault: 'ok' as const,
    when: agentTurn('push the branch', { hasToolResult: true }),
    reply: { text: 'done' },
  },
];

interface ToolCallJson {
  stepId: string;
  callId: string;
  tool: string;
  summary: string;
}

function pushPlan(approve: Record<string, unknown> = {}) {
  return {
    name: 'push',
    workspace: './work',
    steps: [
      {
        id: 'push',
        instruction: 'push the branch',
        agent: { command: cliCommand('claude'), approve: [{ tool: 'Bash', match: 'git push*' }], ...approve },
      },
    ],
  };
}

/** Stores the run, starts a worker, and waits for the tool call to wait for a person. */
async function waitingCall(
  c: CliCase,
  runId: string,
  plan: object,
  workerEnv: Record<string, string> = {},
): Promise<{ worker: BatonProcess; call: ToolCallJson }> {
  const file = writePlan(c.dir, plan);
  expectExit(await runBaton(['run', file, '--id', runId, '--detach'], { home: c.home, env: c.env }), 0);
  const worker = spawnBaton(['worker'], { home: c.home, env: { ...c.env, ...workerEnv } });
  const call = await waitFor(
    async () =>
      (await batonJson<{ toolApprovals: ToolCallJson[] }>(['status', runId], { home: c.home }, [0, 1]))
        .toolApprovals[0],
    120_000,
    'the tool call to wait for approval',
  );
  return { worker, call };
}

async function settled(c: CliCase, runId: string, worker: BatonProcess) {
  await waitFor(
    async () => ((await runStatus(c.home, runId)).status === 'succeeded' ? true : undefined),
    120_000,
    'the run to succeed',
  );
  worker.child.kill('SIGTERM');
  await worker.exited;
}

describe('agent.approve with claude', () => {
  it('holds git push --force for a person; approve --tool lets it run and the model sees its result', async () => {
    const server = await startServer(pushScript);
    const c = cliCase('claude', server);
    const { worker, call } = await waitingCall(c, 'ap1', pushPlan());
    expect(call).toMatchObject({ stepId: 'push', tool: 'Bash', summary: 'git push --force' });
    const text = expectExit(await runBaton(['status', 'ap1'], { home: c.home }), 0);
    expect(text.stdout).toContain('push is waiting for tool approval: Bash "git push --force"');
    expect(text.stdout).toContain(`baton approve ap1 push --tool ${call.callId}`);
    expectExit(
      await runBaton(['approve', 'ap1', 'push', '--tool', call.callId, '--comment', 'release day'], {
        home: c.home,
      }),
      0,
    );
    await settled(c, 'ap1', worker);
    // git ran (and found no repository here): its own words came back to the model.
    const after = server.requests.filter((r) => r.scriptIndex === 1);
    expect(after.map((r) => r.toolResultText).join('\n')).toMatch(/not a git repository/i);
    const decided = (await timeline(c.home, 'ap1')).find((e) => e.type === 'step.tool_approval_decided');
    expect(decided).toMatchObject({
      callId: call.callId,
      tool: 'Bash',
      decision: 'allow',
      comment: 'release day',
    });
    expect((decided as { digest?: string }).digest).toMatch(/^[0-9a-f]{64}$/);
    // Answered once: a second answer is refused.
    const again = expectExit(
      await runBaton(['reject', 'ap1', 'push', '--tool', call.callId], { home: c.home }),
      2,
    );
    expect(again.stderr).toContain('was already allowed');
  }, 300_000);

  it('reject --tool sends the model a denial and the turn goes on; git never runs', async () => {
    const server = await startServer(pushScript);
    const c = cliCase('claude', server);
    const { worker, call } = await waitingCall(c, 'ap2', pushPlan());
    expectExit(
      await runBaton(['reject', 'ap2', 'push', '--tool', call.callId, '--comment', 'not on main'], {
        home: c.home,
      }),
      0,
    );
    await settled(c, 'ap2', worker);
    const after = server.requests
      .filter((r) => r.scriptIndex === 1)
      .map((r) => r.toolResultText)
      .join('\n');
    expect(after).toContain('a person denied this tool call');
    expect(after).toContain('not on main');
    expect(after).not.toMatch(/not a git repository/i);
  }, 300_000);

  it('an unanswered call is denied at approveTimeout, by timeout', async () => {
    const server = await startServer(pushScript);
    const c = cliCase('claude', server);
    const file = writePlan(c.dir, pushPlan({ approveTimeout: '2s' }));
    expectExit(
      await runBaton(['run', file, '--id', 'ap3'], { home: c.home, env: c.env, timeoutMs: 240_000 }),
      0,
    );
    const decided = (await timeline(c.home, 'ap3')).find((e) => e.type === 'step.tool_approval_decided');
    expect(decided).toMatchObject({ decision: 'deny', by: 'timeout' });
    const after = server.requests
      .filter((r) => r.scriptIndex === 1)
      .map((r) => r.toolResultText)
      .join('\n');
    expect(after).toContain('nobody approved this tool call');
  }, 300_000);

  it('a worker SIGKILLed while a call waits: the attempt ends interrupted, its call can no longer be answered, the retry asks again', async () => {
    const server = await startServer([{ ...pushScript[0]!, repeat: 2 }, pushScript[1]!]);
    const c = cliCase('claude', server);
    // A fresh session for the retry: it makes the same call again (a resumed one would be told
    // the call was interrupted).
    const file = writePlan(c.dir, pushPlan({ resume: 'never' }));
    expectExit(await runBaton(['run', file, '--id', 'ap4', '--detach'], { home: c.home, env: c.env }), 0);
    const doomed = spawnBaton(['worker', '--lease', '1s'], { home: c.home, env: c.env });
    const pendingCall = async () =>
      (await batonJson<{ toolApprovals: ToolCallJson[] }>(['status', 'ap4'], { home: c.home }, [0, 1]))
        .toolApprovals[0];
    const first = await waitFor(pendingCall, 120_000, 'the first call to wait');
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const rescuer = spawnBaton(['worker', '--lease', '1s'], { home: c.home, env: c.env });
    const second = await waitFor(
      async () => {
        const call = await pendingCall();
        return call && call.callId !== first.callId ? call : undefined;
      },
      120_000,
      'the retry to ask again',
    );
    const stale = expectExit(
      await runBaton(['approve', 'ap4', 'push', '--tool', first.callId], { home: c.home }),
      2,
    );
    expect(stale.stderr).toContain(`has no tool call ${first.callId} waiting`);
    expectExit(await runBaton(['approve', 'ap4', 'push', '--tool', second.callId], { home: c.home }), 0);
    await settled(c, 'ap4', rescuer);
    const events = await timeline(c.home, 'ap4');
    expect(events.filter((e) => e.type === 'step.failed').map((e) => e.failureClass)).toEqual([
      'interrupted',
    ]);
    expect(events.filter((e) => e.type === 'step.tool_approval_decided').map((e) => e.callId)).toEqual([
      second.callId,
    ]);
  }, 300_000);

  it('over MCP: run_status lists the waiting call and reject_step with toolCallId answers it', async () => {
    const server = await startServer(pushScript);
    const c = cliCase('claude', server);
    const { worker, call } = await waitingCall(c, 'ap5', pushPlan());
    const client = await mcpClient(c.home);
    const status = await callOk<{ toolApprovals: ToolCallJson[] }>(client, 'run_status', { runId: 'ap5' });
    expect(status.toolApprovals.map((t) => [t.callId, t.tool, t.summary])).toEqual([
      [call.callId, 'Bash', 'git push --force'],
    ]);
    await callOk(client, 'reject_step', {
      runId: 'ap5',
      stepId: 'push',
      toolCallId: call.callId,
      comment: 'no',
    });
    await settled(c, 'ap5', worker);
    const decided = (await timeline(c.home, 'ap5')).find((e) => e.type === 'step.tool_approval_decided');
    expect(decided).toMatchObject({ callId: call.callId, decision: 'deny', comment: 'no' });
  }, 300_000);

  it("a held call calls the plan's waiting hooks; their capability URL, served by the console, answers it once", async () => {
    const server = await startServer(pushScript);
    const c = cliCase('claude', server);
    const hook = await hookReceiver();
    const store = SqliteStore.open(join(c.home, 'baton.db'));
    const console = await startTestConsole(store, c.home);
    opened.push({ console, store });
    const plan = { ...pushPlan(), hooks: [{ on: ['waiting'], url: hook.url }] };
    const { worker, call } = await waitingCall(c, 'ap6', plan, { BATON_PUBLIC_URL: console.origin });
    const held = await waitFor(
      async () => hook.calls.find((body) => body.waiting?.for === 'tool'),
      120_000,
      'the waiting hook of the held call',
    );
    expect(held).toMatchObject({
      hook: 'waiting',
      runId: 'ap6',
      waiting: {
        stepId: 'push',
        for: 'tool',
        tool: 'Bash',
        callId: call.callId,
        summary: 'git push --force',
      },
    });
    const urls = held.waiting.urls!;
    expect(urls.approve.startsWith(`${console.origin}/tool/ap6/push/`)).toBe(true);
    // The inbox shows the same call with the same URLs.
    const inbox = await (await fetch(`${console.origin}/inbox`, { headers: withSession() })).text();
    expect(inbox).toContain(`data-call="${call.callId}"`);
    expect(inbox).toContain(urls.approve);
    const answered = await fetch(urls.approve, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ comment: 'from chat' }),
    });
    expect(answered.status).toBe(200);
    expect((await fetch(urls.approve, { method: 'POST' })).status).toBe(404);
    await settled(c, 'ap6', worker);
    const after = server.requests.filter((r) => r.scriptIndex === 1);
    expect(after.map((r) => r.toolResultText).join('\n')).toMatch(/not a git repository/i);
    const decided = (await timeline(c.home, 'ap6')).filter((e) => e.type === 'step.tool_approval_decided');
    expect(decided).toEqual([
      expect.objectContaining({
        callId: call.callId,
        decision: 'allow',
        by: 'capability URL',
        comment: 'from chat',
      }),
    ]);
  }, 300_000);

  it('is refused before the run is stored for a CLI that cannot ask, naming it', async () => {
    const server = await startServer([]);
    const c = cliCase('codex', server);
    const plan = pushPlan();
    plan.steps[0]!.agent.command = cliCommand('codex');
    const file = writePlan(c.dir, plan);
    const refused = expectExit(await runBaton(['run', file], { home: c.home, env: c.env }), 2);
    expect(refused.stderr).toContain('steps.push.agent.approve: the codex agent CLI offers no hook');
  }, 60_000);
});
