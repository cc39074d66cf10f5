import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** What every front door may say about where Baton keeps its state: `--home` and `--store`. */
export interface RuntimeOptions {
  /** Baton's folder (`--home`, `Baton.open({ home })`). */
  home?: string;
  /** A PostgreSQL URL (`--store`, `Baton.open({ store })`); see store-target.ts. */
  store?: string;
}

/** The folder name Baton looks for, as git looks for `.git`. */
export const HOME_FOLDER = '.baton';

/**
 * How the home is found when none is named. `search` (the CLI): the nearest `.baton` folder from the
 * current directory upward, so a heartbeat or a shell in a subfolder finds the project's. `here`
 * (the TypeScript API): `.baton` in the current directory, so a service never picks up a folder of
 * a project above it.
 */
export type HomeDefault = 'search' | 'here';

/**
 * Baton's folder, found the same way by every front door: the option (`--home`, `home`), else
 * BATON_HOME, else the default (see HomeDefault). Commands that only read never create it.
 */
export function resolveHome(
  options: RuntimeOptions,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
  fallback: HomeDefault = 'search',
): string {
  if (options.home !== undefined && options.home !== '') return resolve(cwd, options.home);
  if (env.BATON_HOME) return resolve(cwd, env.BATON_HOME);
  return (fallback === 'search' ? nearestHome(cwd) : null) ?? resolve(cwd, HOME_FOLDER);
}

/** The nearest `.baton` folder at or above `from`, or null. */
function nearestHome(from: string): string | null {
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
export function homeIsNamed(options: RuntimeOptions, env: NodeJS.ProcessEnv = process.env): boolean {
  return (options.home !== undefined && options.home !== '') || Boolean(env.BATON_HOME);
}

/** How the home was chosen, for messages: `--home`, BATON_HOME, or the search. */
export function homeSource(options: RuntimeOptions, env: NodeJS.ProcessEnv = process.env): string {
  if (options.home !== undefined && options.home !== '') return '--home';
  if (env.BATON_HOME) return 'BATON_HOME';
  return `no --home or BATON_HOME, and no ${HOME_FOLDER} folder in ${process.cwd()} or above it`;
}

/** The SQLite database in the home folder, used unless `--store` or BATON_DATABASE_URL names another. */
export function databasePath(home: string): string {
  return join(home, 'baton.db');
}
