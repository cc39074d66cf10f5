/**
 * The real agent CLIs pinned in devDependencies (claude, codex, gemini) as MCP hosts: `baton skill
 * install --target <host> --global` registers `baton mcp` in that host's own user config (claude's
 * ~/.claude.json, codex's $CODEX_HOME/config.toml, gemini's ~/.gemini/settings.json), and the host,
 * driven by `baton mock-llm`'s script of tool calls, calls `propose` and then `run_status` through
 * its own MCP client; the proposed run is in the store. A server started without --allow-run has no
 * `run` tool, so a model asking for it starts nothing.
 */
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { type MockLlmServer, startMockLlmServer } from '../src/testing/mock-llm/server.js';
import type { MockToolCall } from '../src/testing/mock-llm/types.js';
import { batonJson, expectExit, removeTempDirs, runBaton, tempDir } from './helpers/cli.js';
import {
  agentCliEnv,
  agentCliPath,
  describeWithAgentCli,
  removeAgentCliDirs,
  runInOwnGroup,
} from './helpers/mock-cli.js';

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeTempDirs();
  removeAgentCliDirs();
});

const RUN_ID = 'mcp-real-host-1';
const PLAN = JSON.stringify({
  name: 'from-an-mcp-host',
  defaults: { agent: { command: ['true'] } },
  steps: [{ id: 'only', instruction: 'do the one thing' }],
});

type Host = 'claude' | 'codex' | 'gemini';

/** How each host names, allows and reports the tools of the MCP server it calls `baton`. */
interface HostCase {
  /** A call of the server's `tool` as this host declares it to the model. */
  call(tool: string, args: Record<string, unknown>): MockToolCall;
  /** Files the command line names (written in the folder `argv` is given), by name. */
  files?(allowed: string[]): Record<string, string>;
  /** The non-interactive command line that allows the baton tools `allowed` without asking. */
  argv(prompt: string, allowed: string[], files: string): string[];
  /** The model's final answer, read from the host's JSON output. */
  answer(stdout: string): string | undefined;
}

const HOSTS: Record<Host, HostCase> = {
  // `mcp__<server>__<tool>`; --allowedTools takes the server's prefix.
  claude: {
    call: (tool, args) => ({ name: `mcp__baton__${tool}`, arguments: args }),
    argv: (prompt) => ['--allowedTools', 'mcp__baton', '--output-format', 'json', '-p', prompt],
    answer: (stdout) => (JSON.parse(stdout) as { is_error: boolean; result: string }).result,
  },
  // codex 0.171 declares each server's tools as one Responses `namespace` tool, `mcp__<server>`;
  // `codex exec` (approval "never") runs MCP tool calls without asking.
  codex: {
    call: (tool, args) => ({ namespace: 'mcp__baton', name: tool, arguments: args }),
    argv: (prompt) => ['exec', '--json', '--skip-git-repo-check', prompt],
    answer: (stdout) =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { type: string; item?: { type: string; text?: string } })
        .filter((event) => event.type === 'item.completed' && event.item?.type === 'agent_message')
        .at(-1)?.item?.text,
  },
  // `mcp_<server>_<tool>`; in -p mode a tool that is not allowed is refused, not asked about. A
  // policy file (the Policy Engine, which replaces the deprecated --allowed-tools in 0.61) allows
  // exactly these tools of the server named baton; --policy loads it in the user tier.
  gemini: {
    call: (tool, args) => ({ name: `mcp_baton_${tool}`, arguments: args }),
    files: (allowed) => ({
      'baton-tools.toml': `[[rule]]\nmcpName = "baton"\ntoolName = ${JSON.stringify(allowed)}\ndecision = "allow"\npriority = 100\n`,
    }),
    argv: (prompt, _allowed, files) => [
      '-p',
      prompt,
      '-o',
      'json',
      '--policy',
      join(files, 'baton-tools.toml'),
    ],
    answer: (stdout) => (JSON.parse(stdout.slice(stdout.indexOf('{'))) as { response: string }).response,
  },
};

/** `host` in `cwd` with its home `env`; resolves at its exit (its process group killed after 180 s). */
function runHost(host: Host, cwd: string, env: Record<string, string>, prompt: string, allowed: string[]) {
  const files = join(cwd, '..', 'host-files');
  mkdirSync(files, { recursive: true });
  for (const [name, text] of Object.entries(HOSTS[host].files?.(allowed) ?? {}))
    writeFileSync(join(files, name), text);
  return runInOwnGroup(agentCliPath(host), HOSTS[host].argv(prompt, allowed, files), {
    cwd,
    env,
    timeoutMs: 180_000,
  });
}

type Scope = 'global' | 'project';

/**
 * The mock scripted with `calls` (each after the previous one's result), the host's home, and the
 * server registered as a user would: in this host's own user config (--global) or in the project's.
 */
async function hostWorld(
  host: Host,
  calls: [tool: string, args: Record<string, unknown>][],
  scope: Scope = 'global',
) {
  server = await startMockLlmServer({
    script: [
      ...calls.map(([tool, args], index) => ({
        fault: 'ok' as const,
        when: { hasTools: true, hasToolResult: index > 0 },
        reply: { toolCalls: [HOSTS[host].call(tool, args)] },
      })),
      { fault: 'ok' as const, when: { hasTools: true, hasToolResult: true }, reply: { text: 'all done' } },
    ],
  });
  const root = tempDir(`baton-mcp-${host}-`);
  const project = join(root, 'project');
  mkdirSync(project);
  const env = agentCliEnv(host, server, root);
  const global = scope === 'global' ? ['--global'] : [];
  const installed = await runBaton(
    ['skill', 'install', '--target', host, ...global, '--heartbeat', 'none', '--json'],
    { cwd: project, env: { HOME: env.HOME, CODEX_HOME: env.CODEX_HOME } },
  );
  const { mcp } = JSON.parse(expectExit(installed, 0).stdout) as { mcp: { path: string } };
  expect(mcp.path.startsWith(`${project}/`)).toBe(scope === 'project');
  // codex reads a project's config only in a project its user config trusts: trusted as the install says.
  if (scope === 'project' && host === 'codex')
    appendFileSync(
      join(env.CODEX_HOME!, 'config.toml'),
      `\n[projects.${JSON.stringify(project)}]\ntrust_level = "trusted"\n`,
    );
  return { project, env, home: join(project, '.baton') };
}

/**
 * The run's status as stored. A host that never reached the server's tools (codex starting its turn
 * before the server was ready: see codexConfigToml) stored nothing: said with the host's output.
 */
async function storedRun<T>(home: string, output: string): Promise<T> {
  expect(
    existsSync(join(home, 'baton.db')),
    `no store at ${home}: the host never called propose\n${output}`,
  ).toBe(true);
  return batonJson<T>(['status', RUN_ID], { home });
}

/** Turns the script answered (side requests, such as gemini's router, answer with no entry). */
const scriptTurns = () => server!.requests.map((r) => r.scriptIndex).filter((i) => i !== null);

for (const host of ['claude', 'codex', 'gemini'] as const) {
  describeWithAgentCli(host, `${host} as an MCP host of baton mcp`, () => {
    it.each([
      ['global', 'registered with --global'],
      ['project', 'registered in the project'],
    ] as const)('calls propose, then run_status, through its own MCP client (%s: %s); the run is stored awaiting approval', async (scope) => {
      const { project, env, home } = await hostWorld(
        host,
        [
          ['propose', { plan: PLAN, runId: RUN_ID }],
          ['run_status', { runId: RUN_ID }],
        ],
        scope,
      );
      const result = await runHost(host, project, env, 'Plan this work with Baton and tell me its status.', [
        'propose',
        'run_status',
      ]);
      expect(result.code, result.stderr + result.stdout).toBe(0);
      // The tools are allowed by the host's current means, not a deprecated one.
      expect(result.stderr + result.stdout).not.toMatch(/deprecated/i);
      const run = await storedRun<{ id: string; status: string; planName: string }>(
        home,
        result.stderr + result.stdout,
      );
      expect(run).toMatchObject({ id: RUN_ID, status: 'awaiting_approval', planName: 'from-an-mcp-host' });
      // Each call's result went back to the model, which then answered: the three turns of the script.
      expect(scriptTurns()).toEqual([0, 1, 2]);
      expect(HOSTS[host].answer(result.stdout), result.stdout).toBe('all done');
    }, 240_000);

    it('without --allow-run there is no run tool: a model asking for it starts nothing, a proposal still works', async () => {
      const { project, env, home } = await hostWorld(host, [
        ['run', { plan: PLAN, runId: RUN_ID }],
        ['propose', { plan: PLAN, runId: RUN_ID }],
      ]);
      const result = await runHost(host, project, env, 'Run this work with Baton at once.', [
        'run',
        'propose',
      ]);
      expect(result.code, result.stderr + result.stdout).toBe(0);
      // The tools are allowed by the host's current means, not a deprecated one.
      expect(result.stderr + result.stdout).not.toMatch(/deprecated/i);
      expect(scriptTurns()).toEqual([0, 1, 2]);
      // The run exists only as the proposal: nothing started it.
      const run = await storedRun<{ status: string; attemptsTotal: number }>(
        home,
        result.stderr + result.stdout,
      );
      expect(run).toMatchObject({ status: 'awaiting_approval', attemptsTotal: 0 });
    }, 240_000);
  });
}
