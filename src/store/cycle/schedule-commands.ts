import { NO_USAGE } from '../../core/budget.js';
import type { RunFilter } from '../contract/claims.js';
import type { RunSummary } from '../contract/runs.js';
import type { ScheduleStore } from '../contract/schedules.js';
import { ScheduleLook } from '../schedules/schedule-look.js';
import {
  type PauseChange,
  pauseChange,
  replacedValues,
  type ScheduleRow,
  type ScheduleValues,
  scheduleExists,
  scheduleNotFound,
  scheduleValues,
} from '../schedules/schedule-rows.js';
import type {
  NewSchedule,
  ScheduleDetail,
  ScheduleSlot,
  ScheduleSummary,
} from '../schedules/schedule-types.js';
import { summaryOf } from '../store-rows.js';
import type { Maybe } from './maybe-async.js';
import { newRunState } from './new-run.js';
import { type ScheduleTickRows, triggerSlot } from './schedule-tick.js';

/**
 * What the schedule commands ask of a dialect: find, lock and write schedule rows. Each method that
 * changes a schedule is one transaction; those given a `decide` lock the row first (none:
 * SCHEDULE_NOT_FOUND) and write what it answers.
 */
export interface ScheduleRowsDialect {
  /** One write transaction, with the schedule rows of its connection (a trigger writes through them). */
  inTransaction<T>(fn: (rows: ScheduleTickRows) => Maybe<T>): Promise<T>;
  /** Stores a new schedule; false: a schedule has the name already. */
  insert(values: ScheduleValues): Promise<boolean>;
  /** Replaces the plan, inputs, workspace, rules, pause state and cursor with what `decide` answers. */
  replace(name: string, decide: (row: ScheduleRow) => ScheduleValues): Promise<void>;
  /** Writes the pause state `decide` answers; nothing when it answers null. */
  setPaused(name: string, decide: (row: ScheduleRow) => PauseChange | null): Promise<void>;
  /** Removes the schedule and its slot history; false: none. */
  remove(name: string): Promise<boolean>;
  get(name: string): Promise<ScheduleDetail | null>;
  list(): Promise<ScheduleSummary[]>;
  slots(name: string, limit: number): Promise<ScheduleSlot[]>;
  slotOfRun(runId: string): Promise<ScheduleSlot | null>;
  /** The next slot of any schedule; null: none. */
  nextFireAt(): Promise<number | null>;
}

// biome-ignore lint/suspicious/noExplicitAny: a mixin's base must be constructible with any[] (TS2545).
type ReadsBase = abstract new (...args: any[]) => { nextWakeAt(filter?: RunFilter): Promise<number | null> };

/**
 * The schedule commands of the Store contract, once for both dialects, over the dialect's
 * `schedules` (find, lock and write rows): the values stored (schedules/schedule-rows.ts), when a
 * cycle looks at the schedules again (`scheduleLook`), a trigger (cycle/schedule-tick.ts), and the
 * next slot of any schedule in `nextWakeAt`.
 */
export function withSchedules<B extends ReadsBase>(Base: B) {
  abstract class WithSchedules extends Base implements ScheduleStore {
    /** When this process's cycles look at the schedules: a command of its own makes the next one look. */
    readonly scheduleLook = new ScheduleLook();

    /** The dialect's schedule rows. */
    abstract readonly schedules: ScheduleRowsDialect;

    override async nextWakeAt(filter: RunFilter = {}): Promise<number | null> {
      const runs = await super.nextWakeAt(filter);
      if (filter.runId !== undefined) return runs;
      const fire = await this.schedules.nextFireAt();
      return runs === null ? fire : fire === null ? runs : Math.min(runs, fire);
    }

    async addSchedule(spec: NewSchedule): Promise<ScheduleSummary> {
      if (!(await this.schedules.insert(scheduleValues(spec)))) throw scheduleExists(spec.name);
      this.scheduleLook.changed();
      return summaryNow(this.schedules, spec.name);
    }

    async replaceSchedule(spec: NewSchedule): Promise<ScheduleSummary> {
      await this.schedules.replace(spec.name, (row) => replacedValues(row, spec));
      this.scheduleLook.changed();
      return summaryNow(this.schedules, spec.name);
    }

    async pauseSchedule(name: string, now: number): Promise<ScheduleSummary> {
      await this.schedules.setPaused(name, (row) => pauseChange(row, true, now));
      return summaryNow(this.schedules, name);
    }

    async resumeSchedule(name: string, now: number): Promise<ScheduleSummary> {
      await this.schedules.setPaused(name, (row) => pauseChange(row, false, now));
      this.scheduleLook.changed();
      return summaryNow(this.schedules, name);
    }

    removeSchedule(name: string): Promise<boolean> {
      return this.schedules.remove(name);
    }

    async triggerSchedule(name: string, now: number): Promise<RunSummary> {
      const run = await this.schedules.inTransaction((rows) => triggerSlot(rows, name, now));
      return summaryOf(newRunState(run).state, NO_USAGE);
    }

    getSchedule(name: string): Promise<ScheduleDetail | null> {
      return this.schedules.get(name);
    }

    listSchedules(): Promise<ScheduleSummary[]> {
      return this.schedules.list();
    }

    listScheduleSlots(name: string, limit = 20): Promise<ScheduleSlot[]> {
      return this.schedules.slots(name, limit);
    }

    scheduleSlotOfRun(runId: string): Promise<ScheduleSlot | null> {
      return this.schedules.slotOfRun(runId);
    }
  }
  return WithSchedules;
}

/** A schedule's summary after a command on it. */
async function summaryNow(schedules: ScheduleRowsDialect, name: string): Promise<ScheduleSummary> {
  const detail = await schedules.get(name);
  if (!detail) throw scheduleNotFound(name);
  const { plan: _plan, ...summary } = detail;
  return summary;
}
