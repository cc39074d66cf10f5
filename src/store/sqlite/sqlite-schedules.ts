import '../core-libraries.js';
import type { Statement } from 'better-sqlite3';
import { type Maybe, settled } from '../cycle/maybe-async.js';
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
import type { SqliteDatabase } from './open-database.js';

const SLOT_COLUMNS = slotColumns();

/** What the schedules need of the SQLite store: its write transaction and how it stores a run. */
export interface SqliteScheduleAccess {
  write<T>(fn: () => T): T;
  insertRun(spec: NewRun): void;
}

/**
 * The schedule rows of the SQLite store (the decisions are store/cycle/'s: schedule-tick.ts,
 * schedule-commands.ts). Every write runs inside a write transaction (BEGIN IMMEDIATE): writers are
 * serialized, so a tick that reads a due schedule decides its slots and advances its cursor before
 * any other process can look, and each slot starts one run. Its tick rows answer at once.
 */
export class SqliteSchedules implements ScheduleTickRows, ScheduleRowsDialect {
  private readonly statements = new Map<string, Statement>();

  constructor(
    private readonly db: SqliteDatabase,
    private readonly store: SqliteScheduleAccess,
  ) {}

  private sql<P extends unknown[], R>(text: string): Statement<P, R> {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement as Statement<P, R>;
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

  async nextFireAt(): Promise<number | null> {
    return this.nextFire().at;
  }

  /** Up to `limit` schedules due by `dueBy` (schedules_due), and every queued slot whose run ended (schedules_queued). */
  dueSchedules(dueBy: number, limit: number): { rows: ScheduleRowWithPlan[]; more: boolean } {
    const due = this.sql<[number, number], ScheduleRowWithPlan>(
      `SELECT ${scheduleColumns()}, s.plan_json FROM schedules s INDEXED BY schedules_due
       WHERE ${slotDueSql('?')} ORDER BY s.next_fire_at LIMIT ?`,
    ).all(dueBy, limit);
    const queued = this.sql<[], ScheduleRowWithPlan>(
      `SELECT ${scheduleColumns()}, s.plan_json FROM schedules s INDEXED BY schedules_queued
       WHERE ${queuedSlotFreeSql()}`,
    ).all();
    const rows = new Map<string, ScheduleRowWithPlan>();
    for (const row of [...due, ...queued]) rows.set(row.name, row);
    return { rows: [...rows.values()], more: due.length >= limit };
  }

  lockSchedule(name: string): ScheduleRowWithPlan | null {
    return this.row(name) ?? null;
  }

  takenRunIds(ids: readonly string[]): ReadonlySet<string> {
    const exists = this.sql<[string], { id: string }>('SELECT id FROM runs WHERE id = ?');
    return new Set(ids.filter((id) => exists.get(id) !== undefined));
  }

  writeTick(write: ScheduleWrite): void {
    for (const spec of write.runs) this.store.insertRun(spec);
    const slot = this.sql(
      `INSERT INTO schedule_slots (schedule, manual, slot_at, outcome, run_id, reason, slot_count, last_slot_at, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (schedule, manual, slot_at) DO UPDATE SET outcome = excluded.outcome, run_id = excluded.run_id,
         reason = excluded.reason, recorded_at = excluded.recorded_at`,
    );
    for (const { schedule, manual, record: r } of write.slots)
      slot.run(
        schedule,
        manual ? 1 : 0,
        r.slotAt,
        r.outcome,
        r.runId,
        r.reason,
        r.count,
        r.lastSlotAt,
        write.now,
      );
    const cursor = this.sql(
      `UPDATE schedules SET cursor_at = ?, next_fire_at = ?, queued_slot_at = ?, last_run_id = ?, updated_at = ?
       WHERE name = ?`,
    );
    for (const c of write.cursors)
      cursor.run(c.cursorAt, c.nextFireAt, c.queuedSlotAt, c.lastRunId, write.now, c.name);
  }

  async inTransaction<T>(fn: (rows: ScheduleTickRows) => Maybe<T>): Promise<T> {
    return this.store.write(() => settled(fn(this)));
  }

  async insert(v: ScheduleValues): Promise<boolean> {
    return this.store.write(() => {
      if (this.row(v.name)) return false;
      this.sql(
        `INSERT INTO schedules (name, plan_name, plan_json, plan_hash, inputs_json, workspace, rules_json, paused,
           cursor_at, next_fire_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(v.name, ...storedValues(v), v.now);
      return true;
    });
  }

  async replace(name: string, decide: (row: ScheduleRow) => ScheduleValues): Promise<void> {
    this.store.write(() => {
      const v = decide(this.requireRow(name));
      this.sql(
        `UPDATE schedules SET plan_name = ?, plan_json = ?, plan_hash = ?, inputs_json = ?, workspace = ?, rules_json = ?,
           paused = ?, cursor_at = ?, next_fire_at = ?, updated_at = ? WHERE name = ?`,
      ).run(...storedValues(v), name);
    });
  }

  async setPaused(name: string, decide: (row: ScheduleRow) => PauseChange | null): Promise<void> {
    this.store.write(() => {
      const change = decide(this.requireRow(name));
      if (!change) return;
      this.sql(
        'UPDATE schedules SET paused = ?, cursor_at = ?, next_fire_at = ?, updated_at = ? WHERE name = ?',
      ).run(change.paused ? 1 : 0, change.cursorAt, change.nextFireAt, change.at, name);
    });
  }

  async remove(name: string): Promise<boolean> {
    return this.store.write(() => {
      this.sql('DELETE FROM schedule_slots WHERE schedule = ?').run(name);
      return this.sql('DELETE FROM schedules WHERE name = ?').run(name).changes > 0;
    });
  }

  private row(name: string): ScheduleRowWithPlan | undefined {
    return this.sql<[string], ScheduleRowWithPlan>(
      `SELECT ${scheduleColumns()}, s.plan_json FROM schedules s WHERE s.name = ?`,
    ).get(name);
  }

  private requireRow(name: string): ScheduleRowWithPlan {
    const row = this.row(name);
    if (!row) throw scheduleNotFound(name);
    return row;
  }

  async get(name: string): Promise<ScheduleDetail | null> {
    const row = this.row(name);
    return row ? scheduleDetailFromRow(row) : null;
  }

  async list(): Promise<ScheduleSummary[]> {
    return this.sql<[], ScheduleRow>(`SELECT ${scheduleColumns()} FROM schedules s ORDER BY s.name`)
      .all()
      .map(scheduleFromRow);
  }

  async slots(name: string, limit: number): Promise<ScheduleSlot[]> {
    return this.sql<[string, number], SlotRow>(
      `SELECT ${SLOT_COLUMNS} FROM schedule_slots l WHERE l.schedule = ? ORDER BY l.slot_at DESC, l.manual LIMIT ?`,
    )
      .all(name, limit)
      .map(slotFromRow);
  }

  async slotOfRun(runId: string): Promise<ScheduleSlot | null> {
    const row = this.sql<[string], SlotRow>(
      `SELECT ${SLOT_COLUMNS} FROM schedule_slots l INDEXED BY schedule_slots_by_run WHERE l.run_id = ? LIMIT 1`,
    ).get(runId);
    return row ? slotFromRow(row) : null;
  }
}

/**
 * A schedule's values from plan_name to next_fire_at, then the time of the write: the INSERT puts
 * the name before them and updated_at after (the time is created_at there), the UPDATE the name after.
 */
function storedValues(v: ScheduleValues): (string | number | null)[] {
  const paused = v.paused ? 1 : 0;
  return [
    v.planName,
    v.planJson,
    v.planHash,
    v.inputsJson,
    v.workspace,
    v.rulesJson,
    paused,
    v.cursorAt,
    v.nextFireAt,
    v.now,
  ];
}
