import '../core-libraries.js';
import type { Statement } from 'better-sqlite3';
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
import type { SqliteDatabase } from './open-database.js';

type FullRow = ScheduleRow & { plan_json: string };

const SLOT_COLUMNS = slotColumns();

/**
 * The schedules of the SQLite store. Every write runs inside the caller's write transaction
 * (BEGIN IMMEDIATE): writers are serialized, so a tick that reads a due schedule decides its slots
 * and advances its cursor before any other process can look, and each slot starts one run.
 */
export class SqliteSchedules {
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly db: SqliteDatabase) {}

  private sql<P extends unknown[], R>(text: string): Statement<P, R> {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement as Statement<P, R>;
  }

  /** The next slot of any schedule, from the schedules_due index; null: none. */
  nextFireAt(): number | null {
    return this.nextFire().at;
  }

  /** The next slot of any schedule, and whether a slot is queued (two partial indexes). */
  nextFire(): NextFire {
    const row = this.sql<[], { at: number | null; queued: number }>(
      `SELECT (SELECT next_fire_at FROM schedules INDEXED BY schedules_due
         WHERE next_fire_at IS NOT NULL ORDER BY next_fire_at LIMIT 1) AS at,
       EXISTS (SELECT 1 FROM schedules INDEXED BY schedules_queued WHERE queued_slot_at IS NOT NULL) AS queued`,
    ).get();
    return { at: row?.at ?? null, queued: row?.queued === 1 };
  }

  /**
   * Decides the due slots (by `bounds.dueBy`) of up to SCHEDULE_TICK_BATCH schedules, and of queued
   * slots whose run ended, inside the caller's write transaction, as far as their runs fit in
   * `bounds.runLimit` (ticksWithin); `insertRun` stores a run in the same one. A schedule left over
   * keeps its cursor: it is still due.
   */
  tick(bounds: TickBounds, insertRun: (spec: NewRun) => void): TickOutcome {
    const { now, dueBy } = bounds;
    const due = this.sql<[number, number], FullRow>(
      `SELECT ${scheduleColumns()}, s.plan_json FROM schedules s INDEXED BY schedules_due
       WHERE ${slotDueSql('?')} ORDER BY s.next_fire_at LIMIT ?`,
    ).all(dueBy, SCHEDULE_TICK_BATCH);
    const queued = this.sql<[], FullRow>(
      `SELECT ${scheduleColumns()}, s.plan_json FROM schedules s INDEXED BY schedules_queued
       WHERE ${queuedSlotFreeSql()}`,
    ).all();
    const rows = new Map<string, FullRow>();
    for (const row of [...due, ...queued]) rows.set(row.name, row);
    const decided = [...rows.values()].map((row) => ({ row, tick: this.decide(row, dueBy) }));
    const { taken, full } = ticksWithin(decided, bounds.runLimit);
    let started = 0;
    for (const { row, tick } of taken) {
      for (const start of tick.starts) insertRun(slotRun(row, start.runId, now));
      this.recordSlots(row.name, false, tick.records, now);
      this.sql(
        `UPDATE schedules SET cursor_at = ?, next_fire_at = ?, queued_slot_at = ?, last_run_id = ?, updated_at = ?
         WHERE name = ?`,
      ).run(
        tick.cursorAt,
        row.paused ? null : tick.nextFireAt,
        tick.queuedSlotAt,
        tick.lastRunId,
        now,
        row.name,
      );
      started += tick.starts.length;
    }
    return { started, full, more: !full && due.length >= SCHEDULE_TICK_BATCH };
  }

  /** The tick's decision at `dueBy`, again without the run ids that exist already (made by hand). */
  private decide(row: FullRow, dueBy: number): ScheduleTick {
    const state = tickStateOf(row);
    const tick = decideTick(state, dueBy);
    const exists = this.sql<[string], { id: string }>('SELECT id FROM runs WHERE id = ?');
    const taken = new Set(tick.starts.map((s) => s.runId).filter((id) => exists.get(id) !== undefined));
    return taken.size === 0 ? tick : decideTick(state, dueBy, taken);
  }

  private recordSlots(name: string, manual: boolean, records: readonly SlotRecord[], now: number): void {
    const insert = this.sql(
      `INSERT INTO schedule_slots (schedule, manual, slot_at, outcome, run_id, reason, slot_count, last_slot_at, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (schedule, manual, slot_at) DO UPDATE SET outcome = excluded.outcome, run_id = excluded.run_id,
         reason = excluded.reason, recorded_at = excluded.recorded_at`,
    );
    for (const r of records)
      insert.run(name, manual ? 1 : 0, r.slotAt, r.outcome, r.runId, r.reason, r.count, r.lastSlotAt, now);
  }

  add(spec: NewSchedule): void {
    if (this.row(spec.name)) throw scheduleExists(spec.name);
    const v = scheduleValues(spec);
    this.sql(
      `INSERT INTO schedules (name, plan_name, plan_json, plan_hash, inputs_json, workspace, rules_json, paused,
         cursor_at, next_fire_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      v.name,
      v.planName,
      v.planJson,
      v.planHash,
      v.inputsJson,
      v.workspace,
      v.rulesJson,
      v.paused ? 1 : 0,
      v.cursorAt,
      v.paused ? null : v.nextFireAt,
      v.now,
      v.now,
    );
  }

  replace(spec: NewSchedule): void {
    const row = this.row(spec.name);
    if (!row) throw scheduleNotFound(spec.name);
    const v = scheduleValues(spec, Math.max(row.cursor_at, spec.now));
    const paused = spec.paused ?? Boolean(row.paused);
    this.sql(
      `UPDATE schedules SET plan_name = ?, plan_json = ?, plan_hash = ?, inputs_json = ?, workspace = ?, rules_json = ?,
         paused = ?, cursor_at = ?, next_fire_at = ?, updated_at = ? WHERE name = ?`,
    ).run(
      v.planName,
      v.planJson,
      v.planHash,
      v.inputsJson,
      v.workspace,
      v.rulesJson,
      paused ? 1 : 0,
      v.cursorAt,
      paused ? null : v.nextFireAt,
      v.now,
      v.name,
    );
  }

  setPaused(name: string, paused: boolean, now: number): void {
    const row = this.row(name);
    if (!row) throw scheduleNotFound(name);
    if (Boolean(row.paused) === paused) return;
    // Resumed, it goes on from now: the slots of the pause are not made up.
    const cursor = paused ? row.cursor_at : Math.max(row.cursor_at, now);
    const next = paused ? null : nextFireOf(row.rules_json, cursor);
    this.sql(
      'UPDATE schedules SET paused = ?, cursor_at = ?, next_fire_at = ?, updated_at = ? WHERE name = ?',
    ).run(paused ? 1 : 0, cursor, next, now, name);
  }

  remove(name: string): boolean {
    this.sql('DELETE FROM schedule_slots WHERE schedule = ?').run(name);
    return this.sql('DELETE FROM schedules WHERE name = ?').run(name).changes > 0;
  }

  /** The run `baton schedule trigger` starts, recorded as a manual slot; the caller stores it. */
  trigger(name: string, now: number): NewRun {
    const row = this.row(name);
    if (!row) throw scheduleNotFound(name);
    const runId = triggerRunId(name, now);
    this.recordSlots(
      name,
      true,
      [{ slotAt: now, outcome: 'triggered', runId, reason: null, count: 1, lastSlotAt: now }],
      now,
    );
    this.sql('UPDATE schedules SET last_run_id = ?, updated_at = ? WHERE name = ?').run(runId, now, name);
    return slotRun(row, runId, now);
  }

  private row(name: string): FullRow | undefined {
    return this.sql<[string], FullRow>(
      `SELECT ${scheduleColumns()}, s.plan_json FROM schedules s WHERE s.name = ?`,
    ).get(name);
  }

  get(name: string): ScheduleDetail | null {
    const row = this.row(name);
    return row ? scheduleDetailFromRow(row) : null;
  }

  summary(name: string): ScheduleSummary {
    const row = this.row(name);
    if (!row) throw scheduleNotFound(name);
    return scheduleFromRow(row);
  }

  list(): ScheduleSummary[] {
    return this.sql<[], ScheduleRow>(`SELECT ${scheduleColumns()} FROM schedules s ORDER BY s.name`)
      .all()
      .map(scheduleFromRow);
  }

  slots(name: string, limit: number): ScheduleSlot[] {
    return this.sql<[string, number], SlotRow>(
      `SELECT ${SLOT_COLUMNS} FROM schedule_slots l WHERE l.schedule = ? ORDER BY l.slot_at DESC, l.manual LIMIT ?`,
    )
      .all(name, limit)
      .map(slotFromRow);
  }

  slotOfRun(runId: string): ScheduleSlot | null {
    const row = this.sql<[string], SlotRow>(
      `SELECT ${SLOT_COLUMNS} FROM schedule_slots l INDEXED BY schedule_slots_by_run WHERE l.run_id = ? LIMIT 1`,
    ).get(runId);
    return row ? slotFromRow(row) : null;
  }
}
