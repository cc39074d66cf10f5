import { statSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { BatonError, parseArgvJson } from '../core/errors.js';
import { parseDurationMs } from '../core/plan/duration.js';
import type { AgentSpec } from '../core/plan/types.js';

export interface GlobalOptions {
  home?: string;
  /** A PostgreSQL URL (`--store`); the store is opened by `openStore` in open-store.ts. */
  store?: string;
  json?: boolean;
}

/** The folder name Baton looks for, as git looks for `.git`. */
export const HOME_FOLDER = '.baton';

/**
 * Baton's folder, found the same way by every command: `--home`, else BATON_HOME, else the nearest
 * `.baton` folder from the current directory upward (so a heartbeat or a shell in a subfolder
 * finds the project's), else `.baton` in the current directory (created only by commands that
 * write; see openStore).
 */
export function resolveHome(
  options: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string {
  if (options.home !== undefined && options.home !== '') return resolve(cwd, options.home);
  if (env.BATON_HOME) return resolve(cwd, env.BATON_HOME);
  return nearestHome(cwd) ?? resolve(cwd, HOME_FOLDER);
}

/** The nearest `.baton` folder at or above `from`, or null. */
export function nearestHome(from: string): string | null {
  for (let dir = resolve(from); ; ) {
    const candidate = join(dir, HOME_FOLDER);
    try {
      if (statSync(candidate).isDirectory()) return candidate;
    } catch {
      // not here: look one folder up
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** Whether the home was named (`--home`, BATON_HOME) rather than found. */
export function homeIsNamed(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): boolean {
  return (options.home !== undefined && options.home !== '') || Boolean(env.BATON_HOME);
}

/** How the home was chosen, for messages: `--home`, BATON_HOME, or the search. */
export function homeSource(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): string {
  if (options.home !== undefined && options.home !== '') return '--home';
  if (env.BATON_HOME) return 'BATON_HOME';
  return `no --home or BATON_HOME, and no ${HOME_FOLDER} folder in ${process.cwd()} or above it`;
}

/** The SQLite database in the home folder, used unless `--store` or BATON_DATABASE_URL names another. */
export function databasePath(home: string): string {
  return join(home, 'baton.db');
}

/** A lease owner id unique to this process: host, pid and a random suffix. */
export function ownerId(): string {
  return `${hostname()}:${process.pid}:${Math.random().toString(16).slice(2, 8)}`;
}

/**
 * The agent command from `--agent` or BATON_AGENT_CMD: a JSON array of strings (argv), never a
 * string to split, e.g. '["claude","-p","--output-format","json"]'.
 */
export function parseAgentOption(value: string | undefined, where: string): AgentSpec | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const argv = parseArgvJson(value, where);
  return { command: argv, promptVia: argv.includes('{prompt}') ? 'placeholder' : 'arg' };
}

export function agentFromEnvOrOption(option: string | undefined): AgentSpec | undefined {
  return (
    parseAgentOption(option, '--agent') ?? parseAgentOption(process.env.BATON_AGENT_CMD, 'BATON_AGENT_CMD')
  );
}

export function parsePositiveInt(value: string, where: string, max = 100_000): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: expected a whole number from 1 to ${max}, got "${value}"`,
    );
  }
  return Number(value);
}

/** A duration flag: plain digits are milliseconds, or a number with a unit (500ms, 30s, 2m, 1h, 1d). */
export function parseDurationOption(value: string, where: string): number {
  return /^\d+$/.test(value) ? Number(value) : parseDurationMs(value, where);
}
