import type { Store } from '../../store/store.js';
import { maskedReads } from '../masked-reads.js';

/**
 * What every command of the runtime works with, made once by each front door (the CLI per command,
 * `Baton`, the console, the MCP server) from its store and its process. A door never holds the
 * store itself: a command reads and writes through `store`, the store behind the masking boundary
 * (masked-reads.ts), so whatever a command answers is masked by construction.
 */
export interface CommandContext {
  /** The store behind the masking boundary: every answer masked. */
  readonly store: Store;
  /** The same store unmasked: for what Baton copies as it is (a fork's kept results), never for an answer. */
  readonly unmasked: Store;
  /** The Baton home: trusted programs, logs, a fork's default workspace. */
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  /** Secret values beyond the environment's (a store URL's password given with --store). */
  readonly secretValues: readonly string[];
  now(): number;
  /** The functions this process can run: a plan's `fn` steps must name one of them. */
  functions(): readonly string[];
  /** After a command that makes work due: this process's workers look at once. */
  nudge(): void;
}

export interface CommandContextOptions {
  store: Store;
  home: string;
  env?: NodeJS.ProcessEnv;
  secretValues?: readonly string[];
  now?: () => number;
  functions?: () => readonly string[];
  nudge?: () => void;
}

const NONE: readonly string[] = [];

/** The context of one front door's commands. */
export function commandContext(options: CommandContextOptions): CommandContext {
  const env = options.env ?? process.env;
  const secretValues = options.secretValues ?? NONE;
  return {
    store: maskedReads(options.store, env, secretValues),
    unmasked: options.store,
    home: options.home,
    env,
    secretValues,
    now: options.now ?? Date.now,
    functions: options.functions ?? (() => NONE),
    nudge: options.nudge ?? (() => {}),
  };
}
