/**
 * `baton mcp` against a host that was steered into asking for what it should not have, through the
 * real server over stdio and the official SDK's Client: a plan path outside the project (or a link
 * out of it) is refused, a file that is not a plan is never quoted, a request past the request limit
 * is answered with an error while the session goes on, and payloads past the payload limit are
 * refused by the tools with nothing stored.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCommand, cliPath, removeTempDirs, tempDir, waitFor, writePlan } from './helpers/cli.js';
import { callOk, callRefused, closeClients, mcpClient, serverEnv } from './helpers/mcp.js';
import { fixturePlan } from './helpers/plans.js';

afterEach(async () => {
  await closeClients();
  removeTempDirs();
});

const PASSWORD = 'hunter2';

/** A project folder (the server's) with a `.env` beside it and one inside it, and a home beside it. */
function project() {
  const root = tempDir('baton-mcp-hostile-');
  const dir = join(root, 'project');
  mkdirSync(dir);
  writeFileSync(join(root, '.env'), `DB_PASSWORD=${PASSWORD}\n`);
  writeFileSync(join(dir, '.env'), `DB_PASSWORD=${PASSWORD}\nAPI_KEY=${PASSWORD}-key\n`);
  return { root, dir, home: join(root, 'home') };
}

interface Validation {
  valid: boolean;
  problems: { path: string; problem: string; line?: number; column?: number }[];
}

describe('plan paths given over MCP', () => {
  it('refuses ../.env, an absolute path outside and a link out of the project, naming the path and the rule', async () => {
    const { root, dir, home } = project();
    symlinkSync(join(root, '.env'), join(dir, 'plan.yaml'));
    const client = await mcpClient(home, { cwd: dir });
    for (const path of ['../.env', join(root, '.env'), 'plan.yaml']) {
      for (const tool of ['validate_plan', 'propose']) {
        const refused = await callRefused(client, tool, { path });
        expect(refused).toMatch(/^PATH_ESCAPE: path /);
        expect(refused).toContain(path);
        expect(refused).toContain(`the project ${dir}`);
        expect(refused).not.toContain(PASSWORD);
        expect(refused).not.toContain('DB_PASSWORD');
      }
    }
    expect(
      await callRefused(client, 'schedule_add', { name: 'nightly', path: '../.env', every: '1h' }),
    ).toMatch(/^PATH_ESCAPE/);
    // Nothing was stored: the home was never made.
    expect(await callRefused(client, 'run_status', { runId: 'x' })).toMatch(/RUN_NOT_FOUND: no Baton store/);
  });

  it('a file inside the project that is not a plan is refused with the kind of problem, never its text', async () => {
    const { dir, home } = project();
    writeFileSync(join(dir, 'secrets.yaml'), `database:\n  password: ${PASSWORD}\n`);
    writeFileSync(join(dir, 'secrets.json'), `{"password": "${PASSWORD}",\n  oops}\n`);
    writeFileSync(join(dir, 'id_ed25519'), `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1r${PASSWORD}\n`);
    writeFileSync(join(dir, 'token.yaml'), `${PASSWORD}: [\n`);
    const client = await mcpClient(home, { cwd: dir });
    for (const path of ['.env', 'secrets.yaml', 'secrets.json', 'id_ed25519', 'token.yaml']) {
      const answer = await callOk<Validation>(client, 'validate_plan', { path });
      expect(answer.valid, path).toBe(false);
      expect(JSON.stringify(answer), path).not.toContain(PASSWORD);
      expect(JSON.stringify(answer), path).not.toMatch(/DB_PASSWORD|BEGIN OPENSSH|database/);
      expect(answer.problems[0]!.problem).toContain('not quoted over MCP');
      const refused = await callRefused(client, 'propose', { path });
      expect(refused, path).toMatch(/^PLAN_INVALID: /);
      expect(refused, path).not.toContain(PASSWORD);
    }
    // A syntax error keeps its place: line and column.
    const json = await callOk<Validation>(client, 'validate_plan', { path: 'secrets.json' });
    expect(json.problems[0]).toMatchObject({
      line: 2,
      problem: expect.stringMatching(/^not valid JSON here/),
    });

    // A plan in the project, or in the home (here beside it), is read; its own problems are quoted as ever.
    writePlan(dir, {
      name: 'p',
      steps: [
        { id: 'a', instruction: 'x', dependsOn: ['nope'], agent: { command: agentCommand('agent-succeed') } },
      ],
    });
    const problems = await callOk<Validation>(client, 'validate_plan', { path: 'plan.yaml' });
    expect(problems.problems).toEqual([expect.objectContaining({ path: 'steps.a.dependsOn[0]' })]);
    expect(problems.problems[0]!.problem).toContain('unknown step "nope"');
    mkdirSync(home, { recursive: true });
    writePlan(home, fixturePlan([{ id: 'a', instruction: 'x' }]), { name: 'kept.yaml' });
    expect(await callOk(client, 'validate_plan', { path: join(home, 'kept.yaml') })).toMatchObject({
      valid: true,
    });
  });
});

describe('requests past the request limit (8 MiB)', () => {
  it('a 10 MB request is answered with an error naming the limit, and the next call works', async () => {
    const { dir, home } = project();
    const client = await mcpClient(home, { cwd: dir });
    const huge = client.callTool({
      name: 'validate_plan',
      arguments: { plan: 'x'.repeat(10 * 1024 * 1024) },
    });
    await expect(huge).rejects.toThrow(
      /Request too large: \d+ bytes, more than the request limit of baton mcp, 8 MiB/,
    );
    expect(await callOk(client, 'classify', { request: 'write a report' })).toMatchObject({
      verdict: 'SINGLE_STEP',
    });
  });

  it('a line with no id, not UTF-8 or not JSON gets an error answer, and the server answers what follows', async () => {
    const { dir, home } = project();
    const server = spawn(process.execPath, [cliPath, '--home', home, 'mcp'], {
      cwd: dir,
      env: serverEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      server.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
      });
      const answers = () =>
        out
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as { id?: number; error?: { code: number; message: string } });
      // 12 MB of one line without an id, in pieces; then bytes that are not UTF-8; then not JSON.
      const piece = 'y'.repeat(1024 * 1024);
      for (let i = 0; i < 12; i++) server.stdin.write(i === 0 ? `{"x":"${piece}` : piece);
      server.stdin.write('"}\n');
      server.stdin.write(Buffer.from([0xff, 0xfe, 0x0a]));
      server.stdin.write('not json\n');
      const initialize = {
        jsonrpc: '2.0',
        id: 7,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      };
      server.stdin.write(`${JSON.stringify(initialize)}\n`);
      const all = await waitFor(() => (answers().some((a) => a.id === 7) ? answers() : undefined), 30_000);
      expect(all.slice(0, 3).map((a) => [a.id, a.error?.code])).toEqual([
        [undefined, -32600],
        [undefined, -32700],
        [undefined, -32700],
      ]);
      const lineBytes = '{"x":"'.length + 12 * piece.length + '"}'.length;
      expect(all[0]!.error!.message).toContain(
        `Request too large: ${lineBytes} bytes, more than the request limit`,
      );
      expect(all[1]!.error!.message).toContain('not valid UTF-8');
      expect(all[3]).toMatchObject({ id: 7, result: { serverInfo: { name: 'baton' } } });
    } finally {
      server.kill('SIGKILL');
    }
  });
});

describe('payloads past the payload limit (1 MiB)', () => {
  it('send_event and resolve_step with 5 MB are refused naming the limit, and nothing is stored', async () => {
    const { dir, home } = project();
    const client = await mcpClient(home, { cwd: dir });
    const plan = writePlan(
      dir,
      fixturePlan(
        [
          { id: 'deployed', wait: { for: 'event', event: 'deploy-done' } },
          { id: 'a', instruction: 'fail', agent: { command: agentCommand('agent-fail') } },
        ],
        { defaults: { retry: { maxAttempts: 1 } } },
      ),
    );
    const { runId } = await callOk<{ runId: string }>(client, 'propose', { path: plan });
    await callOk(client, 'approve_run', { runId });
    await callOk(client, 'check', { maxSeconds: 60 });
    const statuses = async () =>
      (
        await callOk<{ steps: { stepId: string; status: string }[] }>(client, 'run_status', { runId })
      ).steps.map((s) => `${s.stepId}:${s.status}`);
    expect(await statuses()).toEqual(['deployed:waiting', 'a:blocked']);

    const fiveMegabytes = { notes: 'z'.repeat(5 * 1024 * 1024) };
    const sent = await callRefused(client, 'send_event', {
      event: 'deploy-done',
      runId,
      data: fiveMegabytes,
    });
    const bytes = JSON.stringify(fiveMegabytes).length;
    expect(sent).toContain(
      `INVALID_ARGUMENT: data: ${bytes} bytes, more than the payload limit of 1 MiB (1048576 bytes)`,
    );
    const resolved = await callRefused(client, 'resolve_step', { runId, stepId: 'a', result: fiveMegabytes });
    expect(resolved).toContain(
      `INVALID_ARGUMENT: result: ${bytes} bytes, more than the payload limit of 1 MiB`,
    );

    expect(await statuses()).toEqual(['deployed:waiting', 'a:blocked']);
    const { events } = await callOk<{ events: { type: string }[] }>(client, 'timeline', {
      runId,
      limit: 500,
    });
    expect(events.map((e) => e.type)).not.toContain('event.received');
    expect(events.map((e) => e.type)).not.toContain('step.resolved');
    // Within the limit, both are taken.
    await callOk(client, 'send_event', { event: 'deploy-done', runId, data: { version: '1.2' } });
    await callOk(client, 'resolve_step', { runId, stepId: 'a', result: 'done by hand' });
    expect(await statuses()).toEqual(['deployed:succeeded', 'a:succeeded']);
  });
});
