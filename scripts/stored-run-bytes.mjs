// How many bytes a run holds in a SQLite baton.db: every text and JSON column of its steps,
// attempts, events and plan snapshot. The measure of "a run's stored state stays small", shared by
// test/checkpoints.test.ts and bench/workflow.mjs.
import { join } from 'node:path';
import Database from 'better-sqlite3';

export function storedRunBytes(home, runId) {
  const db = new Database(join(home, 'baton.db'), { readonly: true });
  try {
    const sum = (sql) => db.prepare(sql).pluck().get(runId) ?? 0;
    return (
      sum(
        "SELECT sum(length(coalesce(result_json, '')) + length(coalesce(last_error, ''))) FROM steps WHERE run_id = ?",
      ) +
      sum(
        "SELECT sum(length(coalesce(summary, '')) + length(coalesce(message, '')) + length(outputs_json)) FROM attempts WHERE run_id = ?",
      ) +
      sum('SELECT sum(length(data_json)) FROM events WHERE run_id = ?') +
      sum('SELECT sum(length(plan_json)) FROM run_plans WHERE run_id = ?')
    );
  } finally {
    db.close();
  }
}
