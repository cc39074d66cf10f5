import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { BatonError } from '../core/errors.js';
import { isPostgresUrl, readPostgresUrl } from '../store/postgres/pg-url.js';
import type { Store } from '../store/store.js';
import { type CommandContext, commandContext } from './commands/context.js';
import {
  databasePath,
  HOME_FOLDER,
  type HomeDefault,
  homeIsNamed,
  homeSource,
  type RuntimeOptions,
  resolveHome,
} from './home.js';
import { parseDurationOption } from './parse-values.js';

/** The store the options and environment select. */
export type StoreTarget =
  | { kind: 'sqlite'; path: string; label: string }
  | { kind: 'postgres'; url: string; schema: string; label: string };

/** Which front door asks: how it names the store option in messages, and how it finds the home. */
export interface StoreAsker {
  /** `--store` on the command line, `Baton.open store` in the API. */
  option: string;
  home: HomeDefault;
}

const CLI_ASKER: StoreAsker = { option: '--store', home: 'search' };

/**
 * Which store to use: the store option (`--store <url>`, `Baton.open({ store })`), else
 * BATON_DATABASE_URL, else the SQLite file in the home folder. A URL must be postgres:// or
 * postgresql://; its schema is `?schema=` (taken out of the URL handed to the driver), else
 * BATON_PG_SCHEMA, else "baton". Refuses anything else (exit 2).
 */
export function storeTarget(
  options: RuntimeOptions,
  env: NodeJS.ProcessEnv = process.env,
  asker: StoreAsker = CLI_ASKER,
): StoreTarget {
  const fromOption = options.store !== undefined;
  const raw = fromOption ? options.store : env.BATON_DATABASE_URL || undefined;
  if (raw === undefined) {
    const path = databasePath(resolveHome(options, env, process.cwd(), asker.home));
    return { kind: 'sqlite', path, label: path };
  }
  const where = fromOption ? asker.option : 'BATON_DATABASE_URL';
  const target = readPostgresUrl(raw, where, env.BATON_PG_SCHEMA || 'baton');
  if ('problem' in target) {
    // Leaving the URL out is the other way.
    const hint = isPostgresUrl(raw)
      ? ''
      : `, or leave ${where} out to use the SQLite file in the home folder`;
    throw new BatonError('CONFIG_INVALID', `${target.problem}${hint}`);
  }
  return { kind: 'postgres', ...target };
}

/**
 * The values to mask because of how the store was named: a URL given as an option is in no
 * variable, so it is named here (BATON_DATABASE_URL is masked as a variable, see run-secrets.ts).
 */
export function storeSecrets(options: RuntimeOptions): string[] {
  return options.store ? [options.store] : [];
}

/**
 * What a command does with the store: `read` commands (status, logs, export, retry, …) never
 * create a home or a database; they are refused when there is none. Commands that write (run,
 * propose, import, worker, check with work) create them.
 */
export type StoreUse = 'read' | 'write';

/** Whether the SQLite store of the command line exists (always true for PostgreSQL). */
export function storeExists(options: RuntimeOptions): boolean {
  const target = storeTarget(options);
  return target.kind !== 'sqlite' || existsSync(target.path);
}

/** Refuses a read of a SQLite store that does not exist, naming how the home was chosen. */
function mustHaveStore(options: RuntimeOptions, path: string): void {
  if (existsSync(path)) return;
  const home = dirname(path);
  const source = homeSource(options);
  const why = existsSync(home)
    ? `${home} has no ${basename(path)} yet: nothing has been run with this home`
    : homeIsNamed(options)
      ? `${home} (from ${source}) does not exist`
      : `no Baton home found (${source})`;
  throw new BatonError(
    'CONFIG_INVALID',
    `${why}; give the home with --home <dir> or BATON_HOME, or run from inside the project that has a ${HOME_FOLDER} folder`,
  );
}

/**
 * Opens the store the command line selects (see `storeTarget`): the one way every command opens it.
 * Attempt logs stay under the home folder whichever store holds the runs. A PostgreSQL server that
 * cannot be reached is a configuration error naming host:port, never the password.
 */
export async function openStore(options: RuntimeOptions, use: StoreUse = 'write'): Promise<Store> {
  const target = storeTarget(options);
  if (target.kind === 'sqlite' && use === 'read') mustHaveStore(options, target.path);
  return openStoreTarget(target);
}

/** Opens a store target; each dialect's module (and so its driver) loads only when it is used. */
export async function openStoreTarget(target: StoreTarget): Promise<Store> {
  if (target.kind === 'sqlite') {
    const { SqliteStore } = await import('../store/sqlite/sqlite-store.js');
    return SqliteStore.open(target.path);
  }
  const { PostgresStore } = await import('../store/postgres/postgres-store.js');
  return PostgresStore.open(target.url, { schema: target.schema });
}

/** How `worker` and `check` wait for a store that cannot be reached yet. */
interface StoreWait {
  /** Longest total wait in ms (Infinity: until it answers). 0: do not wait. */
  maxMs: number;
  /** One line per retry: `store unreachable (…), retrying in 4 s`. */
  say(line: string): void;
  /** Stops waiting (a signal): `openStoreWaiting` then returns null. */
  signal?: AbortSignal;
}

/** Waits between tries: 1, 2, 4, 8, 16, then every 30 s. */
const WAIT_STEPS_MS = [1000, 2000, 4000, 8000, 16_000, 30_000];

/**
 * `openStore`, riding out a server that is down or restarting: every failure worth waiting for
 * (see StoreUnreachableError) is retried with capped backoff and one line each, until `maxMs`
 * has passed (then its error, exit 2). Any other error (a wrong URL or password) at once.
 */
export async function openStoreWaiting(options: RuntimeOptions, wait: StoreWait): Promise<Store | null> {
  const { StoreUnreachableError } = await import('../store/store-unreachable.js');
  const deadline = Date.now() + wait.maxMs;
  for (let tries = 0; ; tries++) {
    try {
      return await openStore(options);
    } catch (error) {
      if (!(error instanceof StoreUnreachableError)) throw error;
      const delay = WAIT_STEPS_MS[Math.min(tries, WAIT_STEPS_MS.length - 1)]!;
      const left = deadline - Date.now();
      if (left <= 0) throw error;
      const sleep = Math.min(delay, left);
      wait.say(`store unreachable (${error.reason}), retrying in ${formatWait(sleep)}`);
      if (!(await pause(sleep, wait.signal))) return null;
    }
  }
}

function formatWait(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}

/** Resolves true after `ms`, or false at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((done) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stopped);
      done(true);
    }, ms);
    const stopped = () => {
      clearTimeout(timer);
      done(false);
    };
    signal?.addEventListener('abort', stopped, { once: true });
  });
}

/**
 * `--store-wait`: a duration, `forever`, or 0 (do not wait). Default: forever for `worker` (a
 * service outlives its database's restarts), 30 s for `check` (a heartbeat should end).
 */
export function storeWaitMs(value: string | undefined, fallbackMs: number): number {
  if (value === undefined) return fallbackMs;
  if (value.trim().toLowerCase() === 'forever') return Number.POSITIVE_INFINITY;
  return parseDurationOption(value, '--store-wait');
}

/**
 * The command context of one command of the command line over `store` (see commands/context.ts):
 * its home, and the store URL given with `--store` among the secrets every answer is masked of.
 */
export function commandContextOf(options: RuntimeOptions, store: Store): CommandContext {
  return commandContext({ store, home: resolveHome(options), secretValues: storeSecrets(options) });
}

/** A command context with its store open, and how to close that store. */
export interface OpenCommandContext {
  ctx: CommandContext;
  close(): Promise<void>;
}

/** `openStoreWaiting`, answered as a command context (null: stopped while waiting, nothing opened). */
export async function openCommandContextWaiting(
  options: RuntimeOptions,
  wait: StoreWait,
): Promise<OpenCommandContext | null> {
  const store = await openStoreWaiting(options, wait);
  return store === null ? null : { ctx: commandContextOf(options, store), close: () => store.close() };
}

/** A command context over the store the options select (`read`: see withCommandContext); close it after. */
export async function openCommandContext(
  options: RuntimeOptions,
  use: StoreUse = 'read',
): Promise<OpenCommandContext> {
  const store = await openStore(options, use);
  return { ctx: commandContextOf(options, store), close: () => store.close() };
}

/**
 * Runs `fn` with a command context over the store the options select (`read`: a missing SQLite
 * store is refused, exit 2, and none is made), and closes the store after.
 */
export async function withCommandContext<T>(
  options: RuntimeOptions,
  fn: (ctx: CommandContext) => Promise<T>,
  use: StoreUse = 'read',
): Promise<T> {
  const { ctx, close } = await openCommandContext(options, use);
  try {
    return await fn(ctx);
  } finally {
    await close();
  }
}
