import type { EventRuns } from '../cycle/send-event.js';
import type { LoadedRun } from '../loaded-run.js';
import type { SqliteDatabase } from './open-database.js';
import type { RunRows } from './run-rows.js';

/** What `baton send` needs of the SQLite store: its connection, its runs, its write transaction. */
interface SendEventAccess {
  db: SqliteDatabase;
  rows: RunRows;
  write<T>(fn: () => T): T;
}

/**
 * The SQLite rows of `Store.sendEvent` (the loop and its decisions are store/cycle/send-event.ts):
 * each run held in its own BEGIN IMMEDIATE transaction (writers are serialized).
 */
export function sqliteEventRuns(store: SendEventAccess): EventRuns {
  const { db, rows } = store;
  const waiting = db
    .prepare<[string], string>(
      "SELECT DISTINCT run_id FROM steps INDEXED BY steps_waiting_for WHERE status = 'waiting' AND waiting_for = ? ORDER BY run_id",
    )
    .pluck();
  const keep = db.prepare(
    'INSERT INTO wait_events (run_id, event, data_json, sent_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const state = (entry: LoadedRun | null) => entry?.state ?? null;
  return {
    waitingFor: async (event) => waiting.all(event),
    load: async (runIds) => runIds.flatMap((runId) => rows.load(runId)?.state ?? []),
    inRun: async (runId, decide) =>
      store.write(() => {
        const action = decide(state(rows.load(runId)));
        if (action.kind === 'keep')
          return { action, kept: keep.run(runId, action.event, action.dataJson, action.at).changes > 0 };
        if (action.kind === 'receive') rows.persist(action.transition, action.at);
        return { action, kept: false };
      }),
  };
}
