import { runNotFound } from '../../core/errors.js';
import type { RunState } from '../../core/run-state.js';
import type { Transition } from '../../core/transitions.js';
import {
  checkBeforeSending,
  type EventDelivery,
  eventForRun,
  noRunWaitsFor,
  type SentEvent,
  stepWaitingFor,
  storedPayload,
} from '../cycle/send-event.js';
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
  ): Promise<{ state: RunState; hash: string | null }>;
}

/**
 * `Store.sendEvent` on PostgreSQL: each run in its own transaction under its row lock (the lock a
 * cycle takes before a step starts waiting and takes a kept event), so a step takes the event, or
 * the event is kept for it, exactly once.
 */
export async function sendEventPostgres(
  store: SendEventAccess,
  sent: SentEvent,
  now: number,
): Promise<EventDelivery[]> {
  const runIds =
    sent.runId !== undefined ? [sent.runId] : await runsWaitingFor(store.pool, store.schema, sent.event);
  if (sent.runId === undefined && runIds.length > 0)
    checkBeforeSending(
      [...(await store.loader.load(store.pool, runIds)).values()].map((entry) => entry.state),
      sent,
    );
  const deliveries: EventDelivery[] = [];
  for (const runId of runIds) {
    // One transaction per run, under its row lock: the step takes the event, or it is kept, once.
    const delivery = await inTransaction(store.pool, async (client): Promise<EventDelivery | null> => {
      const entry = await store.lockRun(client, runId);
      if (!entry && sent.runId !== undefined) throw runNotFound(runId);
      const stepId = entry ? stepWaitingFor(entry.state, sent.event) : null;
      if (!entry || (sent.runId === undefined && stepId === null)) return null;
      const change = eventForRun(entry.state, sent, now);
      if (change === 'keep') {
        const kept = await keepEvent(client, store.schema, {
          runId,
          event: sent.event,
          dataJson: storedPayload(entry.state, sent),
          at: now,
        });
        return { runId, stepId: null, outcome: kept ? 'kept' : 'dropped' };
      }
      const written = await store.writeCommand(client, entry, change);
      if (written.hash) store.loader.rememberPlan(runId, written.hash, written.state.plan);
      return { runId, stepId, outcome: 'received' };
    });
    if (delivery) deliveries.push(delivery);
  }
  if (deliveries.length === 0) throw noRunWaitsFor(sent.event);
  return deliveries;
}
