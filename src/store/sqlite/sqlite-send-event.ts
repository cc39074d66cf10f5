import {
  checkBeforeSending,
  type EventDelivery,
  eventForRun,
  noRunWaitsFor,
  type SentEvent,
  stepWaitingFor,
  storedPayload,
} from '../cycle/send-event.js';
import type { LoadedRun } from '../loaded-run.js';
import type { SqliteDatabase } from './open-database.js';
import type { RunRows } from './run-rows.js';

/** What `baton send` needs of the SQLite store: its connection, its runs, its write transaction. */
interface SendEventAccess {
  db: SqliteDatabase;
  rows: RunRows;
  write<T>(fn: () => T): T;
  requireRun(runId: string): LoadedRun;
}

/**
 * `Store.sendEvent` on SQLite: each run in its own BEGIN IMMEDIATE transaction (writers are
 * serialized), so a step takes the event, or the event is kept for it, exactly once.
 */
export async function sendEventSqlite(
  store: SendEventAccess,
  sent: SentEvent,
  now: number,
): Promise<EventDelivery[]> {
  const runIds =
    sent.runId !== undefined
      ? [sent.runId]
      : store.db
          .prepare<[string], { run_id: string }>(
            "SELECT DISTINCT run_id FROM steps INDEXED BY steps_waiting_for WHERE status = 'waiting' AND waiting_for = ? ORDER BY run_id",
          )
          .all(sent.event)
          .map((row) => row.run_id);
  if (sent.runId === undefined)
    checkBeforeSending(
      runIds.flatMap((runId) => store.rows.load(runId)?.state ?? []),
      sent,
    );
  const deliveries: EventDelivery[] = [];
  for (const runId of runIds) {
    // One transaction per run: the step takes the event, or the event is kept, exactly once.
    const delivery = store.write((): EventDelivery | null => {
      const entry = sent.runId === undefined ? store.rows.load(runId) : store.requireRun(runId);
      if (!entry) return null;
      if (sent.runId === undefined && stepWaitingFor(entry.state, sent.event) === null) return null;
      const change = eventForRun(entry.state, sent, now);
      if (change === 'keep') {
        const kept = store.db
          .prepare(
            'INSERT INTO wait_events (run_id, event, data_json, sent_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
          )
          .run(runId, sent.event, storedPayload(entry.state, sent), now);
        return { runId, stepId: null, outcome: kept.changes > 0 ? 'kept' : 'dropped' };
      }
      store.rows.persist(change, now);
      return { runId, stepId: stepWaitingFor(entry.state, sent.event), outcome: 'received' };
    });
    if (delivery) deliveries.push(delivery);
  }
  if (deliveries.length === 0) throw noRunWaitsFor(sent.event);
  return deliveries;
}
