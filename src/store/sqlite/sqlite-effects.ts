import type { EffectKey, EffectRecord } from '../store.js';
import type { SqliteDatabase } from './open-database.js';

/** The effect table of the SQLite store: an intent before a side effect, its result after. Call inside a write transaction. */
export class SqliteEffects {
  private readonly select;
  private readonly insert;
  private readonly complete;
  private readonly remove;
  private readonly removeOfStep;

  constructor(db: SqliteDatabase) {
    this.select = db.prepare<[string, string, string], { state: string; result_json: string | null }>(
      'SELECT state, result_json FROM effects WHERE run_id = ? AND step_id = ? AND key = ?',
    );
    this.insert = db.prepare(
      "INSERT INTO effects (run_id, step_id, key, state, created_at) VALUES (?, ?, ?, 'intent', ?)",
    );
    this.complete = db.prepare(
      `INSERT INTO effects (run_id, step_id, key, state, result_json, created_at, completed_at)
       VALUES (?, ?, ?, 'done', ?, ?, ?)
       ON CONFLICT (run_id, step_id, key) DO UPDATE SET state = 'done', result_json = excluded.result_json,
         completed_at = excluded.completed_at`,
    );
    this.remove = db.prepare(
      "DELETE FROM effects WHERE run_id = ? AND step_id = ? AND key = ? AND state = 'intent'",
    );
    this.removeOfStep = db.prepare('DELETE FROM effects WHERE run_id = ? AND step_id = ?');
  }

  /** The record of `key`, or null after writing an intent for it. */
  begin(key: EffectKey, now: number): EffectRecord | null {
    const row = this.select.get(key.runId, key.stepId, key.key);
    if (row) {
      return row.state === 'done'
        ? { state: 'done', result: JSON.parse(row.result_json ?? 'null') as unknown }
        : { state: 'intent' };
    }
    this.insert.run(key.runId, key.stepId, key.key, now);
    return null;
  }

  finish(key: EffectKey, result: unknown, now: number): void {
    this.complete.run(key.runId, key.stepId, key.key, JSON.stringify(result ?? null), now, now);
  }

  clear(key: EffectKey): void {
    this.remove.run(key.runId, key.stepId, key.key);
  }

  /** Forgets every effect these steps recorded (a rerun that redoes them), done or not. */
  forgetSteps(runId: string, stepIds: readonly string[]): void {
    for (const stepId of stepIds) this.removeOfStep.run(runId, stepId);
  }
}
