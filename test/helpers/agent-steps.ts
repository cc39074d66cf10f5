/**
 * End-to-end tests of agent steps run by the real CLIs (claude, codex, gemini from node_modules/.bin)
 * through the real `baton` binary, each CLI pointed at an in-process `baton mock-llm` server. The
 * CLI's own retry settings are left at their defaults: capping them is Baton's job.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import type { ScriptEntry } from '../../src/testing/mock-llm/script-entry.js';
import { startMockLlmServer } from '../../src/testing/mock-llm/server.js';
import type { MockLlmServer, RecordedRequest } from '../../src/testing/mock-llm/types.js';
import { runBoundMs } from './agent-cli-bounds.js';
import {
  type AttemptJson,
  attempts,
  type BatonResult,
  type RunJson,
  removeTempDirs,
  runBaton,
  runStatus,
  writePlan,
} from './cli.js';
import { type AgentCli, agentCliEnv, agentCliPath, openclawNode, removeAgentCliDirs } from './mock-cli.js';
import { planDir } from './plans.js';

/** A script's match for an agent's turn whose prompt includes `promptIncludes` (side requests, without tools, never use it up). */
export const agentTurn = (promptIncludes: string, extra: Record<string, unknown> = {}) => ({
  hasTools: true,
  promptIncludes,
  ...extra,
});

/**
 * A mock model server for each test of the enclosing block (started by the function returned, with
 * the test's script; closed after the test), and the runs' and the CLIs' scratch folders removed
 * after the block.
 */
export function mockPerTest(): (script: ScriptEntry[]) => Promise<MockLlmServer> {
  let server: MockLlmServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  afterAll(() => {
    removeTempDirs();
    removeAgentCliDirs();
  });
  return async (script) => {
    server = await startMockLlmServer({ script });
    return server;
  };
}

/** The names each CLI gives its own tools. */
export const TOOLS: Record<AgentCli, { write: string; shell: string }> = {
  claude: { write: 'Write', shell: 'Bash' },
  codex: { write: 'exec_command', shell: 'exec_command' },
  gemini: { write: 'write_file', shell: 'run_shell_command' },
  openclaw: { write: 'write', shell: 'exec' },
};

/** Arguments of the CLI's tool call that writes `content` to `path` (absolute) . */
export function writeCall(cli: AgentCli, path: string, content: string) {
  if (cli === 'codex') {
    return {
      name: 'exec_command',
      arguments: { cmd: `printf '%s' ${JSON.stringify(content)} > ${JSON.stringify(path)}` },
    };
  }
  if (cli === 'openclaw') return { name: 'write', arguments: { path, content } };
  return { name: TOOLS[cli].write, arguments: { file_path: path, content } };
}

/** A tool call that runs a long shell command through the CLI's own shell tool. */
export function shellCall(cli: AgentCli, command: string) {
  if (cli === 'codex') return { name: 'exec_command', arguments: { cmd: command } };
  // openclaw backgrounds a command after yieldMs (default 10 s): keep it in the foreground.
  if (cli === 'openclaw') return { name: 'exec', arguments: { command, title: 'wait', yieldMs: 600_000 } };
  return { name: TOOLS[cli].shell, arguments: { command, description: 'wait' } };
}

/** The agent command of a plan for `cli`; `shell` allows the CLI's shell tool without asking. */
export function cliCommand(cli: AgentCli, options: { shell?: boolean } = {}): string[] {
  const bin = agentCliPath(cli);
  switch (cli) {
    case 'claude':
      return [
        bin,
        '-p',
        '--output-format',
        'json',
        '--permission-mode',
        'acceptEdits',
        // A variadic flag last: Baton must still keep the prompt out of it.
        ...(options.shell ? ['--allowedTools', 'Bash', 'Write'] : []),
      ];
    case 'codex':
      return [bin, 'exec', '--json', '--skip-git-repo-check', '--sandbox', 'workspace-write'];
    case 'gemini':
      return [bin, '-o', 'json', '--approval-mode', options.shell ? 'yolo' : 'auto_edit'];
    case 'openclaw':
      // Node 26 runs it; Baton chooses the openclaw profile from the script's name.
      return [openclawNode, bin, 'agent', 'exec', '--json'];
  }
}

export interface CliCase {
  cli: AgentCli;
  dir: string;
  home: string;
  workspace: string;
  /** The environment of the baton process, which its agents inherit (undefined: removed). */
  env: Record<string, string | undefined>;
}

/** A plan folder with a user home (and CODEX_HOME) for `cli`, pointed at `server`. */
export function cliCase(cli: AgentCli, server: MockLlmServer): CliCase {
  const { dir, home } = planDir(`baton-${cli}-steps-`);
  const workspace = join(dir, 'work');
  mkdirSync(workspace);
  if (cli === 'openclaw') {
    // openclaw agent exec reads its retry budget only from the workspace's .openclaw/settings.json
    // (no variable, no flag): set here as its user would, since Baton does not write there.
    mkdirSync(join(workspace, '.openclaw'));
    writeFileSync(
      join(workspace, '.openclaw', 'settings.json'),
      JSON.stringify({ retry: { provider: { maxRetries: 1 } } }),
    );
  }
  // The CLI's own retry settings stay at their defaults (codex: 4 and 5): Baton caps them.
  const env: Record<string, string | undefined> = agentCliEnv(cli, server, dir, undefined);
  // The test runner's own variables would make the CLIs think they run under their own tests
  // (openclaw prints no JSON under VITEST).
  for (const name of Object.keys(process.env)) {
    if (name.startsWith('VITEST') || name === 'NODE_ENV' || name === 'TEST') env[name] = undefined;
  }
  return { cli, dir, home, workspace, env };
}

/**
 * Writes `plan` (workspace: ./work) and runs it to its end with `baton run --json`, killed after
 * runBoundMs of three attempts one after the other (a test's own timeout may end it sooner).
 */
export async function runPlan(
  c: CliCase,
  plan: Record<string, unknown>,
): Promise<{ result: BatonResult; run: RunJson }> {
  const planPath = writePlan(c.dir, { workspace: './work', ...plan });
  const result = await runBaton(['run', planPath, '--json'], {
    home: c.home,
    env: c.env,
    timeoutMs: runBoundMs(c.cli, 3),
  });
  const runId = (JSON.parse(result.stdout) as { id: string }).id;
  return { result, run: await runStatus(c.home, runId) };
}

export function stepAttempts(c: CliCase, runId: string, stepId: string): Promise<AttemptJson[]> {
  return attempts(c.home, runId, stepId);
}

/** The requests answered by script entry `index` during `attempt` (by arrival time). */
export function requestsDuring(
  server: MockLlmServer,
  attempt: Pick<AttemptJson, 'startedAt' | 'endedAt'>,
  index?: number,
): RecordedRequest[] {
  return server.requests.filter(
    (r) =>
      r.at >= (attempt.startedAt ?? 0) &&
      r.at <= (attempt.endedAt ?? Number.MAX_SAFE_INTEGER) &&
      (index === undefined || r.scriptIndex === index),
  );
}

/** Pids of live processes whose environment carries `BATON_RUN_ID=<runId>` (zombies excluded). */
export function processesOfRun(runId: string): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, 'utf8');
      if (!environ.split('\0').includes(`BATON_RUN_ID=${runId}`)) continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
      found.push({ pid: Number(name), cmdline });
    } catch {}
  }
  return found;
}

/** The attempts' own temp folders under a Baton home (`runs/<run>/<step>/attempt-<n>.tmp`). */
export function attemptTempFolders(home: string): string[] {
  const found: string[] = [];
  const runs = join(home, 'runs');
  const list = (folder: string) => {
    try {
      return readdirSync(folder);
    } catch {
      return [];
    }
  };
  for (const run of list(runs))
    for (const step of list(join(runs, run)))
      for (const name of list(join(runs, run, step)))
        if (name.endsWith('.tmp')) found.push(join(runs, run, step, name));
  return found;
}
