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
import type { PgPool } from './open-pool.js';
import { inTransaction } from './transaction.js';

/** The trigger rows of the PostgreSQL store. */
export class PostgresTriggers implements TriggerStore {
  constructor(
    private readonly pool: PgPool,
    private readonly schema: string,
  ) {}

  async addTrigger(spec: NewTrigger): Promise<TriggerSummary> {
    const values = triggerValues(spec);
    const placeholders = values.map((_, index) => `$${index + 1}`).join(', ');
    const { rows } = await this.pool.query<TriggerRow>(
      `INSERT INTO ${this.schema}.triggers (${TRIGGER_COLUMNS}, plan_json) VALUES (${placeholders})
       ON CONFLICT (name) DO NOTHING RETURNING ${TRIGGER_COLUMNS}`,
      values,
    );
    if (!rows[0]) throw triggerExists(spec.name);
    return triggerFromRow(rows[0]);
  }

  async getTrigger(name: string): Promise<TriggerDetail | null> {
    const { rows } = await this.pool.query<TriggerRow & { plan_json: string }>(
      `SELECT ${TRIGGER_COLUMNS}, plan_json FROM ${this.schema}.triggers WHERE name = $1`,
      [name],
    );
    return rows[0] ? triggerDetailFromRow(rows[0]) : null;
  }

  async listTriggers(): Promise<TriggerSummary[]> {
    const { rows } = await this.pool.query<TriggerRow>(
      `SELECT ${TRIGGER_COLUMNS} FROM ${this.schema}.triggers ORDER BY name`,
    );
    return rows.map(triggerFromRow);
  }

  async setTriggerPaused(name: string, paused: boolean, now: number): Promise<TriggerSummary> {
    const { rows } = await this.pool.query<TriggerRow>(
      `UPDATE ${this.schema}.triggers SET paused = $2, updated_at = $3 WHERE name = $1 RETURNING ${TRIGGER_COLUMNS}`,
      [name, paused, now],
    );
    if (!rows[0]) throw triggerNotFound(name);
    return triggerFromRow(rows[0]);
  }

  async removeTrigger(name: string): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      await client.query(`DELETE FROM ${this.schema}.trigger_deliveries WHERE trigger = $1`, [name]);
      const { rowCount } = await client.query(`DELETE FROM ${this.schema}.triggers WHERE name = $1`, [name]);
      return (rowCount ?? 0) > 0;
    });
  }

  async recordTriggerDelivery(delivery: TriggerDelivery): Promise<void> {
    const s = this.schema;
    // One statement: the insert, then only the newest DELIVERIES_KEPT of the trigger are kept.
    await this.pool.query(
      `WITH added AS (
         INSERT INTO ${s}.trigger_deliveries (${DELIVERY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)
       )
       DELETE FROM ${s}.trigger_deliveries WHERE trigger = $1 AND id <= (
         SELECT id FROM ${s}.trigger_deliveries WHERE trigger = $1 ORDER BY id DESC LIMIT 1 OFFSET $7)`,
      [...deliveryValues(delivery), DELIVERIES_KEPT - 1],
    );
  }

  async listTriggerDeliveries(name: string, limit = 20): Promise<TriggerDelivery[]> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM ${this.schema}.trigger_deliveries
       WHERE trigger = $1 ORDER BY id DESC LIMIT $2`,
      [name, limit],
    );
    return rows.map(deliveryFromRow);
  }
}
