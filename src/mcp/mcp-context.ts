import { BatonError } from '../core/errors.js';
import { runSecrets } from '../core/run-secrets.js';
import { type RuntimeOptions, resolveHome } from '../runtime/home.js';
import { maskedReads } from '../runtime/masked-reads.js';
import { openStore, storeExists, storeSecrets } from '../runtime/open-store.js';
import type { Store } from '../store/store.js';
import type { PlanFolders } from './plan-path.js';

/** How the operator started `baton mcp`: the store and home of every command, and what it allows. */
export interface McpServerOptions extends RuntimeOptions {
  /** `--allow-run`: the `run` tool exists, which starts a plan without a person's approval. */
  allowRun?: boolean;
  /** How often a subscribed run is looked at for changes (ms; default 500). */
  pollMs?: number;
}

/**
 * What every tool of one server shares: one store, opened on first use and kept (a host keeps the
 * server for its whole session), read through masked reads; the values masked in every output.
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
  private opened: Promise<Store> | null = null;

  constructor(
    readonly options: McpServerOptions,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.env = env;
    this.home = resolveHome(options, env);
    this.secretValues = storeSecrets(options);
    this.secrets = runSecrets({ env, values: this.secretValues });
    this.planFolders = { project: process.cwd(), home: this.home };
  }

  /** Whether a store exists to read (a read answers "no runs" rather than creating one). */
  hasStore(): boolean {
    return this.opened !== null || storeExists(this.options);
  }

  /** The store, opened (and for SQLite created) the first time a tool needs it. */
  store(): Promise<Store> {
    this.opened ??= openStore(this.options, 'write').catch((error: unknown) => {
      this.opened = null;
      throw error;
    });
    return this.opened;
  }

  /**
   * The store for a call about a run that must exist: where nothing was ever run, the run is not
   * found, and no home or database is created for the question.
   */
  existingStore(): Promise<Store> {
    if (!this.hasStore())
      return Promise.reject(
        new BatonError('RUN_NOT_FOUND', `no Baton store at ${this.home} yet: propose a plan first`),
      );
    return this.store();
  }

  /** The store as the read commands see it: each run's secrets masked. */
  async reads(): Promise<Store> {
    return maskedReads(await this.existingStore(), this.env, this.secretValues);
  }

  now(): number {
    return Date.now();
  }

  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = null;
    if (opened) await (await opened).close();
  }
}
