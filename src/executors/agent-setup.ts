/**
 * What `baton agents` finds out about the agent CLIs on this machine: where each is, its version,
 * and what would make its steps fail before any model is asked (no authentication, an untrusted
 * folder, a Node.js too old for it, a sandbox that cannot start), each with its fix. Reads files and
 * runs `--version` (and `bwrap --help`); changes nothing.
 */
import { execFile } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { childEnvironment } from '../core/child-env.js';
import type { AgentProfileName } from '../core/plan/types.js';
import { AGENT_PROFILES } from './agent-profiles/choose-profile.js';
import { codexHome, configuredProvider, providerEnvKey } from './agent-profiles/codex.js';
import { asRecord } from './agent-profiles/json-output.js';
import { CLI_RETRIES } from './agent-retry-cap.js';
import { checkAgentCommand } from './command-policy.js';
import { readJsonObject, readTextFile } from './config-files.js';
import { satisfiesNodeRange } from './node-range.js';
import { DEFAULT_EXEC_PATH, locateProgram, realPathOrNull } from './program-lookup.js';
import { type TrustedPrograms, trustedPrograms } from './trusted-programs.js';

export interface SetupProblem {
  problem: string;
  fix: string;
}

export interface AgentCliInfo {
  profile: AgentProfileName;
  program: string;
  /** Where it was found on PATH; null: not installed (or not on PATH). */
  path: string | null;
  version: string | null;
  /** The flags that make its output readable by Baton. */
  outputFlags: string;
  /** What Baton sets to cap the CLI's own retries. */
  retryCap: string;
  problems: SetupProblem[];
}

interface SetupContext {
  env: NodeJS.ProcessEnv;
  /** The folder agents will work in (trust checks). */
  workspace: string;
  /** The operator's trusted programs (default: BATON_TRUSTED_AGENTS of `env`). */
  trust?: TrustedPrograms;
}

/**
 * How long `<cli> --version` may take. The probes run at once, so this bounds `baton agents`; a
 * large JavaScript CLI (gemini) took over 15 s to print its version on a 2-core machine under load.
 */
const VERSION_TIMEOUT_MS = 30_000;

/** Every known CLI with a program name, found or not. */
export async function inspectAgentClis(context: SetupContext): Promise<AgentCliInfo[]> {
  const profiles = Object.values(AGENT_PROFILES).filter((profile) => profile.programs.length > 0);
  return Promise.all(profiles.map((profile) => inspect(profile.name, profile.programs[0]!, context)));
}

async function inspect(
  name: AgentProfileName,
  program: string,
  context: SetupContext,
): Promise<AgentCliInfo> {
  const profile = AGENT_PROFILES[name];
  const path = locateProgram(program, {
    cwd: context.workspace,
    pathEnv: context.env.PATH ?? DEFAULT_EXEC_PATH,
  });
  const retryCap = profile.retryCap
    ? profile.retryCap([program], CLI_RETRIES, { env: context.env, readTextFile }).description
    : 'nothing: the CLI has no retry setting Baton knows';
  const info: AgentCliInfo = {
    profile: name,
    program,
    path,
    version: null,
    outputFlags: profile.outputFlags,
    retryCap,
    problems: [],
  };
  if (path === null) return info;
  // Named like the CLI is not enough: the file must be the one its npm package installs, or trusted.
  const verdict = checkAgentCommand([path], {
    cwd: context.workspace,
    trust: context.trust ?? trustedPrograms(null, context.env),
  });
  if (!verdict.ok) {
    const real = realPathOrNull(path) ?? path;
    info.problems.push({
      problem: `${real} is not ${program} as its npm package (${profile.installs.packages.join(', ') || 'none'}) installs it, so Baton gives it no prompt`,
      fix: `if it is the genuine CLI (a native install, say), trust it once: baton trust add ${real}`,
    });
    return info;
  }
  const node = await nodeProblem(path, context);
  if (node) info.problems.push(node);
  info.version = node ? null : await versionOf(path, context.env);
  info.problems.push(...((await CHECKS[name]?.(context)) ?? []));
  return info;
}

/** The first line `<program> --version` prints, or null when it fails or takes too long. */
async function versionOf(path: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const line = (await outputOf(path, ['--version'], env))?.stdout.split('\n').find((l) => l.trim() !== '');
  return line === undefined ? null : line.trim();
}

/** What `<program> <args>` prints, or null when it fails or takes too long. */
function outputOf(
  path: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ stdout: string; stderr: string } | null> {
  return new Promise((done) => {
    execFile(
      path,
      args,
      { env: childEnvironment({ env }), timeout: VERSION_TIMEOUT_MS, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => done(error ? null : { stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

/**
 * A JavaScript CLI started through `#!/usr/bin/env node` runs on the `node` of PATH: compared with
 * the `engines.node` its package.json asks for (openclaw needs Node ≥ 24.16).
 */
async function nodeProblem(path: string, context: SetupContext): Promise<SetupProblem | undefined> {
  const real = realPathOrNull(path);
  if (real === null) return undefined;
  const head = readHead(real);
  if (!/^#!.*\bnode\b/.test(head)) return undefined;
  const engines = engineRange(real);
  if (engines === undefined) return undefined;
  const nodePath = locateProgram('node', {
    cwd: context.workspace,
    pathEnv: context.env.PATH ?? DEFAULT_EXEC_PATH,
  });
  const version = nodePath === null ? null : await versionOf(nodePath, context.env);
  if (version === null || satisfiesNodeRange(version, engines)) return undefined;
  return {
    problem: `needs Node.js ${engines}, and the node on PATH is ${version}`,
    fix: `install a Node.js that satisfies ${engines}, or run the CLI with one: agent.command [/path/to/node, ${real}, …]`,
  };
}

/** `engines.node` of the package.json nearest above a script (its package's). */
function engineRange(scriptPath: string): string | undefined {
  let dir = dirname(scriptPath);
  for (let depth = 0; depth < 6; depth++) {
    if (existsSync(join(dir, 'package.json'))) {
      const node = asRecord(readJsonObject(join(dir, 'package.json')).engines)?.node;
      return typeof node === 'string' ? node : undefined;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

type Check = (context: SetupContext) => SetupProblem[] | Promise<SetupProblem[]>;

const CHECKS: Partial<Record<AgentProfileName, Check>> = {
  claude(context) {
    const env = context.env;
    const home = env.HOME ?? homedir();
    const keyed = [
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_AUTH_TOKEN',
      'CLAUDE_CODE_OAUTH_TOKEN',
      'CLAUDE_CODE_USE_BEDROCK',
      'CLAUDE_CODE_USE_VERTEX',
    ].some((name) => (env[name] ?? '') !== '');
    const configDir = env.CLAUDE_CONFIG_DIR ?? join(home, '.claude');
    if (keyed || existsSync(join(configDir, '.credentials.json'))) return [];
    return [
      {
        problem: 'no authentication configured (claude answers "Not logged in", exit 1)',
        fix: 'set ANTHROPIC_API_KEY (with ANTHROPIC_BASE_URL for a local or self-hosted endpoint), or run claude once and /login',
      },
    ];
  },
  async codex(context) {
    const env = context.env;
    const home = codexHome({ HOME: homedir(), ...env }) ?? join(homedir(), '.codex');
    const sandbox = await codexSandboxProblem(home, context);
    return [...(sandbox ? [sandbox] : []), ...codexAuthProblems(home, env)];
  },
  gemini(context) {
    const env = context.env;
    const home = env.GEMINI_CLI_HOME || env.HOME || homedir();
    const problems: SetupProblem[] = [];
    const settings = [
      env.GEMINI_CLI_SYSTEM_SETTINGS_PATH ?? '/etc/gemini-cli/settings.json',
      join(home, '.gemini', 'settings.json'),
      join(context.workspace, '.gemini', 'settings.json'),
    ].map(readJsonObject);
    const selected = settings.some(
      (s) => typeof asRecord(asRecord(s.security)?.auth)?.selectedType === 'string',
    );
    if (!selected) {
      problems.push({
        problem: 'no authentication type selected (gemini exits 41)',
        fix: 'add {"security":{"auth":{"selectedType":"gemini-api-key"}}} to ~/.gemini/settings.json and set GEMINI_API_KEY',
      });
    }
    const trusted =
      env.GEMINI_CLI_TRUST_WORKSPACE === 'true' ||
      settings.some((s) => asRecord(asRecord(s.security)?.folderTrust)?.enabled === false) ||
      isTrustedFolder(join(home, '.gemini', 'trustedFolders.json'), context.workspace);
    if (!trusted) {
      problems.push({
        problem: `the folder ${context.workspace} is not trusted (gemini exits 55)`,
        fix: 'set GEMINI_CLI_TRUST_WORKSPACE=true in the environment of baton, or add --skip-trust to the agent command',
      });
    }
    return problems;
  },
};

/** What keeps codex from reaching its model: the key of a configured provider, or no login at all. */
function codexAuthProblems(home: string, env: NodeJS.ProcessEnv): SetupProblem[] {
  const config = readTextFile(join(home, 'config.toml'));
  const provider = configuredProvider(config);
  if (provider !== undefined && provider !== 'openai') {
    const envKey = providerEnvKey(config, provider);
    if (envKey !== undefined && (env[envKey] ?? '') === '') {
      return [
        {
          problem: `the provider "${provider}" of ${join(home, 'config.toml')} reads its key from ${envKey}, which is not set (codex fails with "Missing environment variable")`,
          fix: `set ${envKey} in the environment of baton`,
        },
      ];
    }
    return [];
  }
  if (
    existsSync(join(home, 'auth.json')) ||
    (env.OPENAI_API_KEY ?? '') !== '' ||
    (env.CODEX_API_KEY ?? '') !== ''
  )
    return [];
  return [
    {
      problem: 'no authentication configured',
      fix: 'run codex login (or set OPENAI_API_KEY); for a local or self-hosted model, add a model provider to $CODEX_HOME/config.toml (docs/agent-clis.md, codex)',
    },
  ];
}

/**
 * On Linux codex runs each command of its shell tool in bubblewrap: the first `bwrap` on PATH outside
 * the workspace (if it knows `--perms`), else the one it ships. A bwrap older than 0.9 (Debian 12's
 * 0.8.0, Ubuntu 22.04's 0.6) has no `--argv0`, and codex then re-enters its sandbox helper only
 * through the link `$CODEX_HOME/tmp/arg0/…/codex-linux-sandbox`, which a release codex refuses to
 * make when CODEX_HOME is in the temp folder ($TMPDIR, else /tmp). Every command then fails with
 * "bwrap: execvp codex-linux-sandbox: No such file or directory"; codex tells the model so and
 * still exits 0, so only the missing work shows it.
 */
async function codexSandboxProblem(home: string, context: SetupContext): Promise<SetupProblem | undefined> {
  if (process.platform !== 'linux') return undefined;
  const env = context.env;
  // codex canonicalizes $CODEX_HOME (and fails when it does not exist); ~/.codex is taken as written.
  const codexDir = env.CODEX_HOME ? realPathOrNull(env.CODEX_HOME) : home;
  const tempDir = env.TMPDIR ?? '/tmp';
  if (codexDir === null || !isWithin(codexDir, tempDir)) return undefined;
  const bwrap = systemBwrap(env.PATH ?? DEFAULT_EXEC_PATH, context.workspace);
  if (bwrap === null) return undefined;
  const output = await outputOf(bwrap, ['--help'], env);
  // As codex probes it: either flag in either stream; a bwrap without --perms it skips for its own.
  const help = output === null ? '' : `${output.stdout}${output.stderr}`;
  if (!help.includes('--perms') || help.includes('--argv0')) return undefined;
  return {
    problem: `codex's shell tool fails every command ("bwrap: execvp codex-linux-sandbox: No such file or directory", and codex still exits 0): ${bwrap} is older than bubblewrap 0.9 (no --argv0), so codex needs its codex-linux-sandbox helper link, which it does not make while its home ${codexDir} is inside the temp folder ${tempDir}`,
    fix: `set CODEX_HOME to a folder outside ${tempDir}, or put bubblewrap 0.9 or newer first on PATH`,
  };
}

/** The `bwrap` codex would choose: the first on PATH, by its real path, that is not inside the workspace. */
function systemBwrap(pathEnv: string, workspace: string): string | null {
  const cwd = realPathOrNull(workspace) ?? workspace;
  for (const dir of pathEnv.split(':')) {
    const found = locateProgram('bwrap', { cwd, pathEnv: dir });
    const real = found === null ? null : realPathOrNull(found);
    if (real !== null && (cwd === '/' || !isWithin(real, cwd))) return real;
  }
  return null;
}

/** Whether `path` is `folder` or inside it, compared by path components (as Rust's `starts_with`). */
function isWithin(path: string, folder: string): boolean {
  const parts = (p: string) => p.split('/').filter((part) => part !== '' && part !== '.');
  const inner = parts(path);
  const outer = parts(folder);
  return path.startsWith('/') === folder.startsWith('/') && outer.every((part, i) => inner[i] === part);
}

function isTrustedFolder(file: string, workspace: string): boolean {
  const folders = readJsonObject(file);
  const target = resolve(workspace);
  return Object.entries(folders).some(([folder, level]) => {
    const path = resolve(folder);
    if (level === 'TRUST_FOLDER') return target === path;
    if (level === 'TRUST_PARENT') return target === path || target.startsWith(`${dirname(path)}/`);
    return false;
  });
}

/** The first bytes of a file (a CLI's binary can be 400 MB: never read whole). */
function readHead(path: string, bytes = 200): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buffer = Buffer.alloc(bytes);
    return buffer.subarray(0, readSync(fd, buffer, 0, bytes, 0)).toString('latin1');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
