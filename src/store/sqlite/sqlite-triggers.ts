import type { Statement } from 'better-sqlite3';
import {
  DELIVERIES_KEPT,
  type NewTrigger,
  type TriggerDelivery,
  type TriggerDetail,
  type TriggerStore,
  type TriggerSummary,
} from '../contract/triggers.js';
import {
  DELIVERY_COLUMNS,
  type DeliveryRow,
  deliveryFromRow,
  deliveryValues,
  TRIGGER_COLUMNS,
  type TriggerRow,
  triggerDetailFromRow,
  triggerExists,
  triggerFromRow,
  triggerNotFound,
  triggerValues,
} from '../triggers/trigger-rows.js';
import type { SqliteDatabase } from './open-database.js';

/** SQLite binds no booleans: 1 and 0. */
function bindable(values: unknown[]): unknown[] {
  return values.map((value) => (typeof value === 'boolean' ? (value ? 1 : 0) : value));
}

/** The trigger rows of the SQLite store; every write in a write transaction (`write`). */
export class SqliteTriggers implements TriggerStore {
  private readonly statements = new Map<string, Statement>();

  constructor(
    private readonly db: SqliteDatabase,
    private readonly write: <T>(fn: () => T) => T,
  ) {}

  /** Prepared once per text: a delivery reads its trigger and records itself every time. */
  private sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  async addTrigger(spec: NewTrigger): Promise<TriggerSummary> {
    const placeholders = triggerValues(spec)
      .map(() => '?')
      .join(', ');
    try {
      this.write(() =>
        this.sql(`INSERT INTO triggers (${TRIGGER_COLUMNS}, plan_json) VALUES (${placeholders})`).run(
          ...bindable(triggerValues(spec)),
        ),
      );
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
        throw triggerExists(spec.name);
      throw error;
    }
    return this.summary(spec.name);
  }

  async getTrigger(name: string): Promise<TriggerDetail | null> {
    const row = this.sql(`SELECT ${TRIGGER_COLUMNS}, plan_json FROM triggers WHERE name = ?`).get(name) as
      | (TriggerRow & { plan_json: string })
      | undefined;
    return row ? triggerDetailFromRow(row) : null;
  }

  async listTriggers(): Promise<TriggerSummary[]> {
    const rows = this.sql(`SELECT ${TRIGGER_COLUMNS} FROM triggers ORDER BY name`).all() as TriggerRow[];
    return rows.map(triggerFromRow);
  }

  async setTriggerPaused(name: string, paused: boolean, now: number): Promise<TriggerSummary> {
    const changed = this.write(
      () =>
        this.sql('UPDATE triggers SET paused = ?, updated_at = ? WHERE name = ?').run(
          paused ? 1 : 0,
          now,
          name,
        ).changes,
    );
    if (changed === 0) throw triggerNotFound(name);
    return this.summary(name);
  }

  async removeTrigger(name: string): Promise<boolean> {
    return this.write(() => {
      this.sql('DELETE FROM trigger_deliveries WHERE trigger = ?').run(name);
      return this.sql('DELETE FROM triggers WHERE name = ?').run(name).changes > 0;
    });
  }

  /** Deliveries waiting for the next flush, with the callers waiting for it. */
  private queued: { delivery: TriggerDelivery; done: () => void; failed: (error: unknown) => void }[] = [];

  /**
   * Group-committed, as runs are: a call queues its delivery and the next turn of the event loop
   * writes every delivery queued by then in one transaction, so a burst of deliveries costs one
   * fsync, not one each (1,000 a second would not fit otherwise).
   */
  recordTriggerDelivery(delivery: TriggerDelivery): Promise<void> {
    return new Promise((done, failed) => {
      if (this.queued.length === 0) setImmediate(() => this.flush());
      this.queued.push({ delivery, done, failed });
    });
  }

  private flush(): void {
    const batch = this.queued;
    this.queued = [];
    try {
      this.write(() => {
        const insert = this.sql(
          `INSERT INTO trigger_deliveries (${DELIVERY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`,
        );
        for (const { delivery } of batch) insert.run(...deliveryValues(delivery));
        // Only the newest DELIVERIES_KEPT: a flood of refused deliveries cannot grow the table.
        const prune = this.sql(
          `DELETE FROM trigger_deliveries WHERE trigger = @trigger AND id <= (
             SELECT id FROM trigger_deliveries INDEXED BY trigger_deliveries_by_trigger
             WHERE trigger = @trigger ORDER BY id DESC LIMIT 1 OFFSET @kept)`,
        );
        for (const trigger of new Set(batch.map(({ delivery }) => delivery.trigger)))
          prune.run({ trigger, kept: DELIVERIES_KEPT });
      });
    } catch (error) {
      for (const { failed } of batch) failed(error);
      return;
    }
    for (const { done } of batch) done();
  }

  async listTriggerDeliveries(name: string, limit = 20): Promise<TriggerDelivery[]> {
    const rows = this.sql(
      `SELECT ${DELIVERY_COLUMNS} FROM trigger_deliveries INDEXED BY trigger_deliveries_by_trigger
         WHERE trigger = ? ORDER BY id DESC LIMIT ?`,
    ).all(name, limit) as DeliveryRow[];
    return rows.map(deliveryFromRow);
  }

  private async summary(name: string): Promise<TriggerSummary> {
    const row = this.sql(`SELECT ${TRIGGER_COLUMNS} FROM triggers WHERE name = ?`).get(name) as
      | TriggerRow
      | undefined;
    if (!row) throw triggerNotFound(name);
    return triggerFromRow(row);
  }
}
