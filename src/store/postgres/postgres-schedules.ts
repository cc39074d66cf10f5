import '../core-libraries.js';
import { triggerRunId } from '../../core/schedule/schedule-rules.js';
import {
  decideTick,
  type ScheduleTick,
  type SlotRecord,
  ticksWithin,
} from '../../core/schedule/schedule-tick.js';
import {
  type NextFire,
  SCHEDULE_TICK_BATCH,
  type TickBounds,
  type TickOutcome,
} from '../schedules/schedule-look.js';
import {
  nextFireOf,
  type ScheduleRow,
  type SlotRow,
  scheduleColumns,
  scheduleDetailFromRow,
  scheduleExists,
  scheduleFromRow,
  scheduleNotFound,
  scheduleValues,
  slotColumns,
  slotFromRow,
  slotRun,
  tickStateOf,
} from '../schedules/schedule-rows.js';
import type {
  NewSchedule,
  ScheduleDetail,
  ScheduleSlot,
  ScheduleSummary,
} from '../schedules/schedule-types.js';
import { queuedSlotFreeSql, slotDueSql } from '../schedules/slots-due.js';
import type { NewRun } from '../store.js';
import type { PgClient, PgPool } from './open-pool.js';
import { toPgJson } from './pg-json.js';
import { inTransaction } from './transaction.js';

type FullRow = ScheduleRow & { plan_json: string };

/**
 * The schedules of the PostgreSQL store. A tick runs in the cycle's transaction and locks the due
 * schedule rows FOR UPDATE SKIP LOCKED: each row is decided by one transaction at a time (another
 * worker takes other rows, or finds this one's cursor moved once it commits), so a slot starts
 * one run however many workers tick at once. Commands on a schedule lock its row too.
 */
export class PostgresSchedules {
  constructor(
    private readonly pool: PgPool,
    private readonly schema: string,
  ) {}

  private get columns(): string {
    return scheduleColumns(`${this.schema}.`);
  }

  private get slotColumns(): string {
    return slotColumns(`${this.schema}.`);
  }

  async nextFireAt(): Promise<number | null> {
    const { rows } = await this.pool.query<{ at: number | null }>(
      `SELECT min(next_fire_at) AS at FROM ${this.schema}.schedules WHERE next_fire_at IS NOT NULL`,
    );
    return rows[0]?.at ?? null;
  }

  /**
   * Decides the due slots (by `bounds.dueBy`) of the schedules it can lock, in the caller's
   * transaction, as far as their runs fit in `bounds.runLimit` (ticksWithin; a schedule left over
   * keeps its cursor, still due); `insertRuns` stores the runs on the same connection, in one
   * statement. Returns what it did and the next slot of any schedule.
   */
  async tick(
    client: PgClient,
    bounds: TickBounds,
    insertRuns: (specs: readonly NewRun[]) => Promise<void>,
  ): Promise<TickOutcome & { next: NextFire }> {
    const s = this.schema;
    const { now, dueBy } = bounds;
    const { rows } = await client.query<FullRow>(
      `SELECT ${this.columns}, s.plan_json FROM ${s}.schedules s
       WHERE (${slotDueSql('$1')}) OR (${queuedSlotFreeSql(`${s}.runs`)})
       ORDER BY s.next_fire_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
      [dueBy, SCHEDULE_TICK_BATCH],
    );
    const { taken, full } = ticksWithin(await this.decideAll(client, rows, dueBy), bounds.runLimit);
    const runs: NewRun[] = [];
    const slots: unknown[] = [];
    const updates: unknown[] = [];
    for (const { row, tick } of taken) {
      for (const start of tick.starts) runs.push(slotRun(row, start.runId, now));
      slots.push(...slotRows(row.name, false, tick.records, now));
      updates.push({
        name: row.name,
        cursor_at: tick.cursorAt,
        next_fire_at: tick.nextFireAt,
        queued_slot_at: tick.queuedSlotAt,
        last_run_id: tick.lastRunId,
      });
    }
    if (runs.length > 0) await insertRuns(runs);
    if (taken.length > 0) {
      await this.insertSlots(client, slots);
      await client.query(
        `UPDATE ${s}.schedules s SET cursor_at = u.cursor_at, next_fire_at = u.next_fire_at,
           queued_slot_at = u.queued_slot_at, last_run_id = u.last_run_id, updated_at = $2
         FROM json_to_recordset($1::json) AS u (name text, cursor_at bigint, next_fire_at bigint,
           queued_slot_at bigint, last_run_id text)
         WHERE s.name = u.name`,
        [toPgJson(updates), now],
      );
    }
    return {
      started: runs.length,
      full,
      more: !full && rows.length >= SCHEDULE_TICK_BATCH,
      next: await this.nextFire(client),
    };
  }

  /** The next slot of any schedule, and whether a slot is queued, on the cycle's connection. */
  async nextFire(client: PgClient): Promise<NextFire> {
    const s = this.schema;
    const next = await client.query<{ at: number | null; queued: boolean }>(
      `SELECT (SELECT min(next_fire_at) FROM ${s}.schedules WHERE next_fire_at IS NOT NULL) AS at,
         EXISTS (SELECT 1 FROM ${s}.schedules WHERE queued_slot_at IS NOT NULL) AS queued`,
    );
    return { at: next.rows[0]?.at ?? null, queued: next.rows[0]?.queued === true };
  }

  /**
   * Each schedule's decision; a schedule whose slot would take a run id that exists already (made by
   * hand) is decided again without it. One query looks the ids up for every schedule at once.
   */
  private async decideAll(
    client: PgClient,
    rows: readonly FullRow[],
    dueBy: number,
  ): Promise<{ row: FullRow; tick: ScheduleTick }[]> {
    const decided = rows.map((row) => ({ row, tick: decideTick(tickStateOf(row), dueBy) }));
    const ids = decided.flatMap(({ tick }) => tick.starts.map((start) => start.runId));
    if (ids.length === 0) return decided;
    const { rows: found } = await client.query<{ id: string }>(
      `SELECT id FROM ${this.schema}.runs WHERE id = ANY($1)`,
      [ids],
    );
    if (found.length === 0) return decided;
    const taken = new Set(found.map((r) => r.id));
    return decided.map(({ row, tick }) =>
      tick.starts.some((start) => taken.has(start.runId))
        ? { row, tick: decideTick(tickStateOf(row), dueBy, taken) }
        : { row, tick },
    );
  }

  private async insertSlots(client: PgClient, slots: readonly unknown[]): Promise<void> {
    if (slots.length === 0) return;
    await client.query(
      `INSERT INTO ${this.schema}.schedule_slots (schedule, manual, slot_at, outcome, run_id, reason, slot_count,
         last_slot_at, recorded_at)
       SELECT x.schedule, x.manual, x.slot_at, x.outcome, x.run_id, x.reason, x.slot_count, x.last_slot_at, x.recorded_at
       FROM json_to_recordset($1::json) AS x (schedule text, manual boolean, slot_at bigint, outcome text, run_id text,
         reason text, slot_count integer, last_slot_at bigint, recorded_at bigint)
       ON CONFLICT (schedule, manual, slot_at) DO UPDATE SET outcome = excluded.outcome, run_id = excluded.run_id,
         reason = excluded.reason, recorded_at = excluded.recorded_at`,
      [toPgJson(slots)],
    );
  }

  async add(spec: NewSchedule): Promise<void> {
    const v = scheduleValues(spec);
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
        v.paused ? null : v.nextFireAt,
        v.now,
      ],
    );
    if (rowCount === 0) throw scheduleExists(spec.name);
  }

  async replace(spec: NewSchedule): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const row = await this.lockRow(client, spec.name);
      const v = scheduleValues(spec, Math.max(row.cursor_at, spec.now));
      const paused = spec.paused ?? Boolean(row.paused);
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
          paused,
          v.cursorAt,
          paused ? null : v.nextFireAt,
          v.now,
          v.name,
        ],
      );
    });
  }

  async setPaused(name: string, paused: boolean, now: number): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const row = await this.lockRow(client, name);
      if (Boolean(row.paused) === paused) return;
      const cursor = paused ? row.cursor_at : Math.max(row.cursor_at, now);
      const next = paused ? null : nextFireOf(row.rules_json, cursor);
      await client.query(
        `UPDATE ${this.schema}.schedules SET paused = $1, cursor_at = $2, next_fire_at = $3, updated_at = $4
         WHERE name = $5`,
        [paused, cursor, next, now, name],
      );
    });
  }

  async remove(name: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(`DELETE FROM ${this.schema}.schedules WHERE name = $1`, [
      name,
    ]);
    return (rowCount ?? 0) > 0;
  }

  /** Records a manual slot and returns its run, in the caller's transaction (which stores the run). */
  async trigger(client: PgClient, name: string, now: number): Promise<NewRun> {
    const row = await this.lockRow(client, name);
    const runId = triggerRunId(name, now);
    await this.insertSlots(
      client,
      slotRows(
        name,
        true,
        [{ slotAt: now, outcome: 'triggered', runId, reason: null, count: 1, lastSlotAt: now }],
        now,
      ),
    );
    await client.query(
      `UPDATE ${this.schema}.schedules SET last_run_id = $1, updated_at = $2 WHERE name = $3`,
      [runId, now, name],
    );
    return slotRun(row, runId, now);
  }

  private async lockRow(client: PgClient, name: string): Promise<FullRow> {
    const { rows } = await client.query<FullRow>(
      `SELECT ${this.columns}, s.plan_json FROM ${this.schema}.schedules s WHERE s.name = $1 FOR UPDATE OF s`,
      [name],
    );
    if (!rows[0]) throw scheduleNotFound(name);
    return rows[0];
  }

  async get(name: string): Promise<ScheduleDetail | null> {
    const { rows } = await this.pool.query<FullRow>(
      `SELECT ${this.columns}, s.plan_json FROM ${this.schema}.schedules s WHERE s.name = $1`,
      [name],
    );
    return rows[0] ? scheduleDetailFromRow(rows[0]) : null;
  }

  async summary(name: string): Promise<ScheduleSummary> {
    const detail = await this.get(name);
    if (!detail) throw scheduleNotFound(name);
    const { plan: _plan, ...summary } = detail;
    return summary;
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

function slotRows(name: string, manual: boolean, records: readonly SlotRecord[], now: number): unknown[] {
  return records.map((r) => ({
    schedule: name,
    manual,
    slot_at: r.slotAt,
    outcome: r.outcome,
    run_id: r.runId,
    reason: r.reason,
    slot_count: r.count,
    last_slot_at: r.lastSlotAt,
    recorded_at: now,
  }));
}
