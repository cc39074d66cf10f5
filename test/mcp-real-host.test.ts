/**
 * The real claude CLI (pinned in devDependencies) as an MCP host: `baton skill install --target
 * claude --global` registers `baton mcp` in its ~/.claude.json, and claude, driven by `baton
 * mock-llm`'s script of tool calls, calls `propose` and then `run_status` through its own MCP
 * client; the proposed run is in the store. A server started without --allow-run has no `run`
 * tool, so a model asking for it starts nothing.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type MockLlmServer, startMockLlmServer } from '../src/testing/mock-llm/server.js';
import { batonJson, expectExit, removeTempDirs, runBaton, tempDir } from './helpers/cli.js';
import { agentCliEnv, agentCliPath, removeAgentCliDirs } from './helpers/mock-cli.js';

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeTempDirs();
  removeAgentCliDirs();
});

const RUN_ID = 'mcp-real-host-1';
const PLAN = JSON.stringify({
  name: 'from-claude',
  defaults: { agent: { command: ['true'] } },
  steps: [{ id: 'only', instruction: 'do the one thing' }],
});

/** claude -p in `cwd` with its home `env`, allowed the baton server's tools; resolves at its exit. */
function runClaude(cwd: string, env: Record<string, string>, prompt: string) {
  const child = spawn(
    agentCliPath('claude'),
    ['--allowedTools', 'mcp__baton', '--output-format', 'json', '-p', prompt],
    { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, 'SIGKILL'), 180_000);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function hostWorld(toolCalls: { name: string; arguments: Record<string, unknown> }[]) {
  server = await startMockLlmServer({
    script: [
      ...toolCalls.map((call, index) => ({
        fault: 'ok' as const,
        when: { hasTools: true, ...(index === 0 ? { hasToolResult: false } : { hasToolResult: true }) },
        reply: { toolCalls: [call] },
      })),
      { fault: 'ok' as const, when: { hasTools: true, hasToolResult: true }, reply: { text: 'all done' } },
    ],
  });
  const root = tempDir('baton-mcp-claude-');
  const project = join(root, 'project');
  mkdirSync(project);
  const env = agentCliEnv('claude', server, root);
  // The skill and the server, registered as a user would: in this claude's own ~/.claude.json.
  expectExit(
    await runBaton(['skill', 'install', '--target', 'claude', '--global', '--heartbeat', 'none'], {
      cwd: project,
      env: { HOME: env.HOME! },
    }),
    0,
  );
  return { project, env, home: join(project, '.baton') };
}

describe('claude as an MCP host of baton mcp', () => {
  it('calls propose, then run_status, through its own MCP client; the run is stored awaiting approval', async () => {
    const { project, env, home } = await hostWorld([
      { name: 'mcp__baton__propose', arguments: { plan: PLAN, runId: RUN_ID } },
      { name: 'mcp__baton__run_status', arguments: { runId: RUN_ID } },
    ]);
    const result = await runClaude(project, env, 'Plan this work with Baton and tell me its status.');
    expect(result.code, result.stderr + result.stdout).toBe(0);
    const run = await batonJson<{ id: string; status: string; planName: string }>(['status', RUN_ID], {
      home,
    });
    expect(run).toMatchObject({ id: RUN_ID, status: 'awaiting_approval', planName: 'from-claude' });
    // Each call's result went back to the model, which then answered: the three turns of the script.
    expect(server!.requests.map((r) => r.scriptIndex).filter((i) => i !== null)).toEqual([0, 1, 2]);
    expect(JSON.parse(result.stdout)).toMatchObject({ is_error: false, result: 'all done' });
  }, 240_000);

  it('without --allow-run there is no run tool: a model asking for it starts nothing, a proposal still works', async () => {
    const { project, env, home } = await hostWorld([
      { name: 'mcp__baton__run', arguments: { plan: PLAN, runId: RUN_ID } },
      { name: 'mcp__baton__propose', arguments: { plan: PLAN, runId: RUN_ID } },
    ]);
    const result = await runClaude(project, env, 'Run this work with Baton at once.');
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(server!.requests.map((r) => r.scriptIndex).filter((i) => i !== null)).toEqual([0, 1, 2]);
    // The run exists only as the proposal: nothing started it.
    const run = await batonJson<{ status: string; attemptsTotal: number }>(['status', RUN_ID], { home });
    expect(run).toMatchObject({ status: 'awaiting_approval', attemptsTotal: 0 });
  }, 240_000);
});
