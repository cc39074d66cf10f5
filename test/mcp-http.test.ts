/**
 * `baton mcp --http`: streamable HTTP on 127.0.0.1, reached by the official SDK's Client with the
 * bearer token; without it (or with another) every request is refused. And the SDK is loaded by
 * `baton mcp` alone: `baton --help` and the other commands never load it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cliPath,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  tempDir,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { callOk, callRefused, serverEnv } from './helpers/mcp.js';
import { fixturePlan, planDir } from './helpers/plans.js';

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await stopProcesses();
  removeTempDirs();
});

async function startHttpServer(home: string, token: string, cwd: string) {
  const tokenFile = join(tempDir('baton-mcp-token-'), 'token');
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const server = spawnBaton(['mcp', '--http', '--token-file', tokenFile], {
    home,
    cwd,
    env: serverEnv(),
  });
  const url = await waitFor(
    () => /streamable HTTP at (\S+)/.exec(server.stdout())?.[1],
    30_000,
    'the address',
  );
  expect(server.stdout()).not.toContain(token);
  return { server, url };
}

describe('baton mcp --http', () => {
  it('answers the SDK client that sends the bearer token, and refuses every request without it', async () => {
    const { dir, home } = planDir('baton-mcp-http-');
    const token = 'a-test-token-of-enough-length-42';
    const { url } = await startHttpServer(home, token, dir);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);

    const client = new Client({ name: 'baton-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('propose');
    expect(tools.map((tool) => tool.name)).not.toContain('run');
    const plan = writePlan(dir, fixturePlan([{ id: 'a', instruction: 'do a' }]));
    const proposed = await callOk<{ runId: string; status: string }>(client, 'propose', { path: plan });
    expect(proposed.status).toBe('awaiting_approval');
    expect(await callOk(client, 'run_status', { runId: proposed.runId })).toMatchObject({
      status: 'awaiting_approval',
    });
    expect(await callRefused(client, 'run_status', { runId: 'missing' })).toMatch(/RUN_NOT_FOUND/);

    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    for (const authorization of [undefined, 'Bearer wrong-token-of-the-same-size-42', token]) {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization === undefined ? {} : { authorization }),
        },
        body: JSON.stringify(initialize),
      });
      expect(response.status, String(authorization)).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
    }
    // Another Host than this address (DNS rebinding) is refused even with the token.
    const rebound = spawnSync(
      'curl',
      [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '-H',
        'Host: evil.example:80',
        '-H',
        `Authorization: Bearer ${token}`,
        '-H',
        'content-type: application/json',
        '-H',
        'accept: application/json, text/event-stream',
        '--data',
        JSON.stringify(initialize),
        url,
      ],
      { encoding: 'utf8' },
    );
    if (rebound.status === 0) expect(rebound.stdout).toBe('403');
  });

  it('a payload over 1 MiB is refused by the tool naming the payload limit; a body over 8 MiB is answered 413, and the session goes on', async () => {
    const { dir, home } = planDir('baton-mcp-http-sizes-');
    const token = 'a-test-token-of-enough-length-42';
    const { url } = await startHttpServer(home, token, dir);
    const client = new Client({ name: 'baton-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    const plan = writePlan(dir, fixturePlan([{ id: 'w', wait: { for: 'event', event: 'go' } }]));
    const { runId } = await callOk<{ runId: string }>(client, 'propose', { path: plan });
    // 5 MB is within the request limit (8 MiB), so the tool itself answers, with its own limit.
    const data = 'z'.repeat(5 * 1024 * 1024);
    expect(await callRefused(client, 'send_event', { event: 'go', runId, data })).toMatch(
      /^INVALID_ARGUMENT: data: \d+ bytes, more than the payload limit of 1 MiB/,
    );
    await expect(
      client.callTool({ name: 'validate_plan', arguments: { plan: 'x'.repeat(9 * 1024 * 1024) } }),
    ).rejects.toThrow(/Payload Too Large: Request body must not exceed 8388608 bytes/);
    expect(await callOk(client, 'run_status', { runId })).toMatchObject({ status: 'awaiting_approval' });
  });
});

describe('baton mcp bad input', () => {
  it('refuses --port or --token-file without --http, and a token file it cannot read, with exit 2', async () => {
    const home = join(tempDir('baton-mcp-bad-'), 'home');
    const port = await runBaton(['mcp', '--port', '5'], { home });
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port and --token-file are for --http');
    const missing = await runBaton(['mcp', '--http', '--token-file', join(home, 'nope')], { home });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read it (ENOENT)');
    const short = join(tempDir('baton-mcp-bad-'), 'short');
    writeFileSync(short, 'abc\n', { mode: 0o600 });
    const weak = await runBaton(['mcp', '--http', '--token-file', short], { home });
    expect(weak.code).toBe(2);
    expect(weak.stderr).toContain('at least 16 characters');
    expect(existsSync(home)).toBe(false);
  });
});

describe('the SDK is loaded by baton mcp alone', () => {
  it('baton --help and baton status never load @modelcontextprotocol/sdk; baton mcp does', () => {
    const dir = tempDir('baton-mcp-lazy-');
    writeFileSync(
      join(dir, 'hooks.mjs'),
      `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.LOAD_LOG, url + '\\n');
  return next(url, context);
}
`,
    );
    writeFileSync(
      join(dir, 'register.mjs'),
      `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`,
    );
    const loaded = (args: string[]) => {
      const log = join(dir, `${args[0]}.log`);
      writeFileSync(log, '');
      spawnSync(
        process.execPath,
        ['--import', join(dir, 'register.mjs'), cliPath, '--home', join(dir, 'home'), ...args],
        {
          env: { ...serverEnv(), LOAD_LOG: log },
          input: '',
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      return readFileSync(log, 'utf8');
    };
    const help = loaded(['--help']);
    expect(help).toContain('/cli/program.js');
    expect(help).not.toContain('@modelcontextprotocol');
    expect(loaded(['status'])).not.toContain('@modelcontextprotocol');
    expect(loaded(['mcp'])).toContain('@modelcontextprotocol/sdk');
  });
});
