/**
 * The skill's home: an OpenClaw heartbeat drives Baton. A real openclaw 2026.9 Gateway (Node 26,
 * test/hosts/openclaw) with the heartbeat line in the workspace's HEARTBEAT.md runs one heartbeat
 * turn on demand; its model (the mock) calls openclaw's exec tool with `baton check --quiet`, which
 * runs a stored Baton run (Node 20) to its end.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openclawConfig, openclawEnv } from '../src/testing/mock-llm/agent-cli-setup.js';
import { type MockLlmServer, startMockLlmServer } from '../src/testing/mock-llm/server.js';
import { attemptBoundMs, testBoundMs } from './helpers/agent-cli-bounds.js';
import { cliPath, removeTempDirs, runBaton, runStatus, tempDir, waitFor, writePlan } from './helpers/cli.js';
import { describeWithOpenclaw, openclawEntry, openclawNode } from './helpers/mock-cli.js';
import { fixturePlan } from './helpers/plans.js';
import { TRUSTED_FIXTURES } from './helpers/trusted-fixtures.js';

let gateway: ChildProcess | undefined;
let server: MockLlmServer | undefined;
afterAll(async () => {
  if (gateway?.pid !== undefined) {
    try {
      process.kill(-gateway.pid, 'SIGKILL');
    } catch {}
  }
  await server?.close();
  removeTempDirs();
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

// Up to seven openclaw runs one after the other: doctor (again when its lease timed out), the
// Gateway listing its jobs, the heartbeat turn.
describeWithOpenclaw('an OpenClaw heartbeat', { timeout: testBoundMs('openclaw', 7) }, () => {
  it('runs `baton check` from HEARTBEAT.md through its exec tool, and the stored run finishes', async () => {
    const dir = tempDir('baton-openclaw-heartbeat-');
    const batonHome = join(dir, 'baton-home');
    const plan = writePlan(dir, fixturePlan([{ id: 'report', instruction: 'write the report' }]));
    const stored = await runBaton(['run', plan, '--detach', '--json'], { home: batonHome });
    expect(stored.code, stored.stderr).toBe(0);
    const runId = (JSON.parse(stored.stdout) as { id: string }).id;

    const check = `${quote(process.execPath)} ${quote(cliPath)} --home ${quote(batonHome)} check --quiet`;
    server = await startMockLlmServer({
      script: [
        {
          fault: 'ok',
          when: { hasTools: true, promptIncludes: 'baton check --quiet', hasToolResult: false },
          reply: { toolCalls: [{ name: 'exec', arguments: { command: check, title: 'baton check' } }] },
        },
        { fault: 'ok', when: { hasTools: true, hasToolResult: true }, reply: { text: 'HEARTBEAT_OK' } },
      ],
    });
    const home = join(dir, 'user-home');
    const workspace = join(home, '.openclaw', 'workspace');
    mkdirSync(workspace, { recursive: true });
    const config = openclawConfig(server) as { agents: { defaults: Record<string, unknown> } } & Record<
      string,
      unknown
    >;
    config.gateway = {
      mode: 'local',
      port: await freePort(),
      bind: 'loopback',
      auth: { mode: 'token', token: 'tk' },
    };
    config.agents.defaults = {
      ...config.agents.defaults,
      workspace,
      heartbeat: { every: '30m', target: 'none', isolatedSession: true, lightContext: true },
    };
    writeFileSync(join(home, '.openclaw', 'openclaw.json'), JSON.stringify(config));
    // The line docs/operating.md and the skill tell users to add.
    writeFileSync(
      join(workspace, 'HEARTBEAT.md'),
      'Run `baton check --quiet` and report only BLOCKED lines.\n',
    );
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      ...openclawEnv(),
      OPENCLAW_GATEWAY_TOKEN: 'tk',
      OPENCLAW_SKIP_CHANNELS: '1',
      OPENCLAW_DISABLE_BONJOUR: '1',
      // The stored run's agent is a fixture, trusted as an operator would trust their own agent.
      BATON_TRUSTED_AGENTS: TRUSTED_FIXTURES,
    };
    const openclaw = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          openclawNode,
          [openclawEntry, ...args],
          { env, timeout: attemptBoundMs('openclaw'), maxBuffer: 1 << 24 },
          (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      });

    // openclaw 2026.9 reads HEARTBEAT.md only once doctor has moved it into its heartbeat job.
    // Under CPU load its own state lease can time out ("state lease heartbeat did not become
    // ready"), and doctor refuses the migration: run again, as a person would (it is idempotent).
    let doctor = await openclaw(['doctor', '--fix', '--non-interactive']);
    for (let again = 0; again < 3 && doctor.code !== 0 && /lease/.test(doctor.stderr); again++) {
      doctor = await openclaw(['doctor', '--fix', '--non-interactive']);
    }
    expect(doctor.code, doctor.stderr.slice(-2000)).toBe(0);
    gateway = spawn(openclawNode, [openclawEntry, 'gateway', 'run'], {
      env,
      stdio: 'ignore',
      detached: true,
    });
    // A Gateway still starting may answer with its jobs not loaded yet: wait for the heartbeat's.
    let lastListing = '';
    const heartbeat = await waitFor(
      async () => {
        const listed = await openclaw(['cron', 'list', '--all', '--json']);
        if (listed.code !== 0) return undefined;
        lastListing = listed.stdout;
        return heartbeatJob(listed.stdout);
      },
      attemptBoundMs('openclaw'),
      'the OpenClaw Gateway to list its heartbeat job',
      1000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; last listing: ${lastListing.slice(0, 2000)}`);
    });

    const beat = await openclaw(['cron', 'run', heartbeat.id, '--wait', '--json']);
    expect(beat.code, beat.stderr.slice(-2000)).toBe(0);
    expect(JSON.parse(beat.stdout)).toMatchObject({ ok: true, completed: true, status: 'ok' });
    // The heartbeat prompt carried the line, and the model's exec call ran baton check.
    expect(server.requests[0]?.userText).toContain('baton check --quiet');
    expect((await runStatus(batonHome, runId)).status).toBe('succeeded');
  });
});

/** The heartbeat job in `openclaw cron list --json` (a list, or `{ jobs }`), once doctor moved it there. */
function heartbeatJob(stdout: string): { id: string } | undefined {
  try {
    const parsed = JSON.parse(stdout) as { jobs?: unknown[] } | unknown[];
    const list = (Array.isArray(parsed) ? parsed : (parsed.jobs ?? [])) as {
      id: string;
      declarationKey?: string;
    }[];
    return list.find((job) => job.declarationKey === 'heartbeat:main');
  } catch {
    return undefined;
  }
}
