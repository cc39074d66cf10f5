import { BatonError } from '../core/errors.js';
import { runSecrets } from '../core/run-secrets.js';
import { type CommandContext, commandContext } from '../runtime/commands/context.js';
import type { StartingProcess } from '../runtime/commands/start-commands.js';
import { type RuntimeOptions, resolveHome } from '../runtime/home.js';
import { openStore, storeExists, storeSecrets } from '../runtime/open-store.js';
import type { PlanFolders } from './plan-path.js';

/** How the operator started `baton mcp`: the store and home of every command, and what it allows. */
export interface McpServerOptions extends RuntimeOptions {
  /** `--allow-run`: the `run` tool exists, which starts a plan without a person's approval. */
  allowRun?: boolean;
  /** How often a subscribed run is looked at for changes (ms; default 500). */
  pollMs?: number;
}

/**
 * What every tool of one server shares: one command context of the runtime (the store opened on
 * first use and kept, a host keeps the server for its whole session, behind the masking boundary),
 * and the values masked in every output. A tool translates its arguments to a runtime command on
 * `commands()` and its answer back; it never holds the store.
 */
export class McpContext {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  /** The values masked because of how the store was named (a URL given with --store). */
  readonly secretValues: readonly string[];
  /** Every secret of this process's environment and settings: masked in every output, errors too. */
  readonly secrets: readonly string[];
  /** Where a plan given by path may be: the folder the server was started in, and the home. */
  readonly planFolders: PlanFolders;
  /** What a run is prepared with (no store needed): the server runs no TypeScript functions. */
  readonly starting: StartingProcess;
  private opened: Promise<CommandContext> | null = null;

  constructor(
    readonly options: McpServerOptions,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.env = env;
    this.home = resolveHome(options, env);
    this.secretValues = storeSecrets(options);
    this.secrets = runSecrets({ env, values: this.secretValues });
    this.planFolders = { project: process.cwd(), home: this.home };
    this.starting = { home: this.home, env };
  }

  /** Whether a store exists to read (a read answers "no runs" rather than creating one). */
  hasStore(): boolean {
    return this.opened !== null || storeExists(this.options);
  }

  /** The runtime's commands over the store, opened (and for SQLite created) the first time a tool needs it. */
  commands(): Promise<CommandContext> {
    this.opened ??= openStore(this.options, 'write').then(
      (store) =>
        commandContext({
          store,
          home: this.home,
          env: this.env,
          secretValues: this.secretValues,
          now: () => this.now(),
        }),
      (error: unknown) => {
        this.opened = null;
        throw error;
      },
    );
    return this.opened;
  }

  /**
   * The commands for a call about something that must exist: where nothing was ever stored, it is
   * not found (`notFound`, by default the run's refusal), and no home or database is created for
   * the question.
   */
  existingCommands(notFound?: () => Error): Promise<CommandContext> {
    if (!this.hasStore())
      return Promise.reject(
        notFound?.() ??
          new BatonError('RUN_NOT_FOUND', `no Baton store at ${this.home} yet: propose a plan first`),
      );
    return this.commands();
  }

  now(): number {
    return Date.now();
  }

  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = null;
    if (opened) await (await opened).store.close();
  }
}
