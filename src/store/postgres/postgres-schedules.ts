import '../core-libraries.js';
import type { Maybe } from '../cycle/maybe-async.js';
import type { ScheduleRowsDialect } from '../cycle/schedule-commands.js';
import type { ScheduleTickRows, ScheduleWrite } from '../cycle/schedule-tick.js';
import type { NextFire } from '../schedules/schedule-look.js';
import {
  type PauseChange,
  type ScheduleRow,
  type ScheduleRowWithPlan,
  type ScheduleValues,
  type SlotRow,
  scheduleColumns,
  scheduleDetailFromRow,
  scheduleFromRow,
  scheduleNotFound,
  slotColumns,
  slotFromRow,
} from '../schedules/schedule-rows.js';
import type { ScheduleDetail, ScheduleSlot, ScheduleSummary } from '../schedules/schedule-types.js';
import { queuedSlotFreeSql, slotDueSql } from '../schedules/slots-due.js';
import type { NewRun } from '../store.js';
import type { PgClient, PgPool } from './open-pool.js';
import { toPgJson } from './pg-json.js';
import { inTransaction } from './transaction.js';

/** Stores new runs on the transaction's connection, in one statement (createRunsSql). */
export type InsertRuns = (client: PgClient, specs: readonly NewRun[]) => Promise<void>;

/**
 * The schedule rows of the PostgreSQL store (the decisions are store/cycle/'s: schedule-tick.ts,
 * schedule-commands.ts). A tick runs in the cycle's transaction and locks the due schedule rows FOR
 * UPDATE SKIP LOCKED: each row is decided by one transaction at a time (another worker takes other
 * rows, or finds this one's cursor moved once it commits), so a slot starts one run however many
 * workers tick at once. Commands on a schedule lock its row too.
 */
export class PostgresSchedules implements ScheduleRowsDialect {
  constructor(
    private readonly pool: PgPool,
    private readonly schema: string,
    private readonly insertRuns: InsertRuns,
  ) {}

  private get columns(): string {
    return scheduleColumns(`${this.schema}.`);
  }

  private get slotColumns(): string {
    return slotColumns(`${this.schema}.`);
  }

  /** The schedule rows of a transaction on `client` (a cycle's, a trigger's). */
  on(client: PgClient): ScheduleTickRows {
    const s = this.schema;
    return {
      dueSchedules: async (dueBy, limit) => {
        const { rows } = await client.query<ScheduleRowWithPlan>(
          `SELECT ${this.columns}, s.plan_json FROM ${s}.schedules s
           WHERE (${slotDueSql('$1')}) OR (${queuedSlotFreeSql(`${s}.runs`)})
           ORDER BY s.next_fire_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
          [dueBy, limit],
        );
        return { rows, more: rows.length >= limit };
      },
      lockSchedule: (name) => this.lockRow(client, name),
      takenRunIds: async (ids) => {
        const { rows } = await client.query<{ id: string }>(`SELECT id FROM ${s}.runs WHERE id = ANY($1)`, [
          ids,
        ]);
        return new Set(rows.map((row) => row.id));
      },
      writeTick: (write) => this.writeTick(client, write),
      nextFire: () => this.nextFire(client),
    };
  }

  private async writeTick(client: PgClient, write: ScheduleWrite): Promise<void> {
    if (write.runs.length > 0) await this.insertRuns(client, write.runs);
    if (write.slots.length > 0)
      await client.query(
        `INSERT INTO ${this.schema}.schedule_slots (schedule, manual, slot_at, outcome, run_id, reason, slot_count,
           last_slot_at, recorded_at)
         SELECT x.schedule, x.manual, x.slot_at, x.outcome, x.run_id, x.reason, x.slot_count, x.last_slot_at, x.recorded_at
         FROM json_to_recordset($1::json) AS x (schedule text, manual boolean, slot_at bigint, outcome text, run_id text,
           reason text, slot_count integer, last_slot_at bigint, recorded_at bigint)
         ON CONFLICT (schedule, manual, slot_at) DO UPDATE SET outcome = excluded.outcome, run_id = excluded.run_id,
           reason = excluded.reason, recorded_at = excluded.recorded_at`,
        [
          toPgJson(
            write.slots.map(({ schedule, manual, record: r }) => ({
              schedule,
              manual,
              slot_at: r.slotAt,
              outcome: r.outcome,
              run_id: r.runId,
              reason: r.reason,
              slot_count: r.count,
              last_slot_at: r.lastSlotAt,
              recorded_at: write.now,
            })),
          ),
        ],
      );
    if (write.cursors.length > 0)
      await client.query(
        `UPDATE ${this.schema}.schedules s SET cursor_at = u.cursor_at, next_fire_at = u.next_fire_at,
           queued_slot_at = u.queued_slot_at, last_run_id = u.last_run_id, updated_at = $2
         FROM json_to_recordset($1::json) AS u (name text, cursor_at bigint, next_fire_at bigint,
           queued_slot_at bigint, last_run_id text)
         WHERE s.name = u.name`,
        [
          toPgJson(
            write.cursors.map((c) => ({
              name: c.name,
              cursor_at: c.cursorAt,
              next_fire_at: c.nextFireAt,
              queued_slot_at: c.queuedSlotAt,
              last_run_id: c.lastRunId,
            })),
          ),
          write.now,
        ],
      );
  }

  /** The next slot of any schedule, and whether a slot is queued, on the cycle's connection. */
  private async nextFire(client: PgClient): Promise<NextFire> {
    const s = this.schema;
    const next = await client.query<{ at: number | null; queued: boolean }>(
      `SELECT (SELECT min(next_fire_at) FROM ${s}.schedules WHERE next_fire_at IS NOT NULL) AS at,
         EXISTS (SELECT 1 FROM ${s}.schedules WHERE queued_slot_at IS NOT NULL) AS queued`,
    );
    return { at: next.rows[0]?.at ?? null, queued: next.rows[0]?.queued === true };
  }

  async nextFireAt(): Promise<number | null> {
    const { rows } = await this.pool.query<{ at: number | null }>(
      `SELECT min(next_fire_at) AS at FROM ${this.schema}.schedules WHERE next_fire_at IS NOT NULL`,
    );
    return rows[0]?.at ?? null;
  }

  inTransaction<T>(fn: (rows: ScheduleTickRows) => Maybe<T>): Promise<T> {
    return inTransaction(this.pool, async (client) => fn(this.on(client)));
  }

  async insert(v: ScheduleValues): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO ${this.schema}.schedules (name, plan_name, plan_json, plan_hash, inputs_json, workspace, rules_json,
         paused, cursor_at, next_fire_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) ON CONFLICT (name) DO NOTHING`,
      [
        v.name,
        v.planName,
        v.planJson,
        v.planHash,
        v.inputsJson,
        v.workspace,
        v.rulesJson,
        v.paused,
        v.cursorAt,
        v.nextFireAt,
        v.now,
      ],
    );
    return (rowCount ?? 0) > 0;
  }

  async replace(name: string, decide: (row: ScheduleRow) => ScheduleValues): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const v = decide(await this.requireRow(client, name));
      await client.query(
        `UPDATE ${this.schema}.schedules SET plan_name = $1, plan_json = $2, plan_hash = $3, inputs_json = $4,
           workspace = $5, rules_json = $6, paused = $7, cursor_at = $8, next_fire_at = $9, updated_at = $10
         WHERE name = $11`,
        [
          v.planName,
          v.planJson,
          v.planHash,
          v.inputsJson,
          v.workspace,
          v.rulesJson,
          v.paused,
          v.cursorAt,
          v.nextFireAt,
          v.now,
          name,
        ],
      );
    });
  }

  async setPaused(name: string, decide: (row: ScheduleRow) => PauseChange | null): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const change = decide(await this.requireRow(client, name));
      if (!change) return;
      await client.query(
        `UPDATE ${this.schema}.schedules SET paused = $1, cursor_at = $2, next_fire_at = $3, updated_at = $4
         WHERE name = $5`,
        [change.paused, change.cursorAt, change.nextFireAt, change.at, name],
      );
    });
  }

  async remove(name: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(`DELETE FROM ${this.schema}.schedules WHERE name = $1`, [
      name,
    ]);
    return (rowCount ?? 0) > 0;
  }

  /** The schedule's row, locked for the caller's transaction; null: none. */
  private async lockRow(client: PgClient, name: string): Promise<ScheduleRowWithPlan | null> {
    const { rows } = await client.query<ScheduleRowWithPlan>(
      `SELECT ${this.columns}, s.plan_json FROM ${this.schema}.schedules s WHERE s.name = $1 FOR UPDATE OF s`,
      [name],
    );
    return rows[0] ?? null;
  }

  private async requireRow(client: PgClient, name: string): Promise<ScheduleRowWithPlan> {
    const row = await this.lockRow(client, name);
    if (!row) throw scheduleNotFound(name);
    return row;
  }

  async get(name: string): Promise<ScheduleDetail | null> {
    const { rows } = await this.pool.query<ScheduleRowWithPlan>(
      `SELECT ${this.columns}, s.plan_json FROM ${this.schema}.schedules s WHERE s.name = $1`,
      [name],
    );
    return rows[0] ? scheduleDetailFromRow(rows[0]) : null;
  }

  async list(): Promise<ScheduleSummary[]> {
    const { rows } = await this.pool.query<ScheduleRow>(
      `SELECT ${this.columns} FROM ${this.schema}.schedules s ORDER BY s.name`,
    );
    return rows.map(scheduleFromRow);
  }

  async slots(name: string, limit: number): Promise<ScheduleSlot[]> {
    const { rows } = await this.pool.query<SlotRow>(
      `SELECT ${this.slotColumns} FROM ${this.schema}.schedule_slots l WHERE l.schedule = $1
       ORDER BY l.slot_at DESC, l.manual LIMIT $2`,
      [name, limit],
    );
    return rows.map(slotFromRow);
  }

  async slotOfRun(runId: string): Promise<ScheduleSlot | null> {
    const { rows } = await this.pool.query<SlotRow>(
      `SELECT ${this.slotColumns} FROM ${this.schema}.schedule_slots l WHERE l.run_id = $1 LIMIT 1`,
      [runId],
    );
    return rows[0] ? slotFromRow(rows[0]) : null;
  }
}
