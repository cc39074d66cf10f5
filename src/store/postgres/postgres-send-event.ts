import type { RunState } from '../../core/run-state.js';
import type { Transition } from '../../core/transitions.js';
import type { EventRuns } from '../cycle/send-event.js';
import type { PgClient, PgPool } from './open-pool.js';
import type { PgLoadedRun, RunLoader } from './run-loader.js';
import { inTransaction } from './transaction.js';
import { keepEvent, runsWaitingFor } from './wait-events.js';

/** What `baton send` needs of the PostgreSQL store: its pool, its runs, its human-command write. */
interface SendEventAccess {
  pool: PgPool;
  schema: string;
  loader: RunLoader;
  lockRun(client: PgClient, runId: string): Promise<PgLoadedRun | undefined>;
  writeCommand(
    client: PgClient,
    entry: PgLoadedRun,
    transition: Transition,
    now: number,
  ): Promise<{ state: RunState; hash: string | null }>;
}

/**
 * The PostgreSQL rows of `Store.sendEvent` (the loop and its decisions are store/cycle/send-event.ts):
 * each run held in its own transaction under its row lock.
 */
export function postgresEventRuns(store: SendEventAccess): EventRuns {
  const { pool, schema, loader } = store;
  return {
    waitingFor: (event) => runsWaitingFor(pool, schema, event),
    load: async (runIds) => [...(await loader.load(pool, runIds)).values()].map((entry) => entry.state),
    inRun: (runId, decide) =>
      inTransaction(pool, async (client) => {
        const entry = await store.lockRun(client, runId);
        const action = decide(entry?.state ?? null);
        if (action.kind === 'keep')
          return { action, kept: await keepEvent(client, schema, { runId, ...action }) };
        if (action.kind === 'receive') {
          const written = await store.writeCommand(client, entry!, action.transition, action.at);
          if (written.hash) loader.rememberPlan(runId, written.hash, written.state.plan);
        }
        return { action, kept: false };
      }),
  };
}
