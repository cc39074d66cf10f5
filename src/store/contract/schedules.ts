import type {
  NewSchedule,
  ScheduleDetail,
  ScheduleSlot,
  ScheduleSummary,
} from '../schedules/schedule-types.js';
import type { RunSummary } from './runs.js';

// The schedules of the Store contract (core/schedule/). Their due slots are ticked by `cycle` (a
// cycle of every run, not one driven run), in its transaction: each slot is decided once, however
// many processes cycle (store/cycle/schedule-tick.ts, once for both dialects). Contract suite:
// test/store-schedules-contract.ts.

export interface ScheduleStore {
  /** Stores a schedule; throws SCHEDULE_EXISTS for a name in use. */
  addSchedule(spec: NewSchedule): Promise<ScheduleSummary>;
  /**
   * `baton schedule update`: a new plan snapshot and rules; slots already decided stay decided.
   * This and the commands below throw SCHEDULE_NOT_FOUND for an unknown name.
   */
  replaceSchedule(spec: NewSchedule): Promise<ScheduleSummary>;
  getSchedule(name: string): Promise<ScheduleDetail | null>;
  /** Every schedule, by name. */
  listSchedules(): Promise<ScheduleSummary[]>;
  /** A paused schedule decides no slot; resumed, it goes on from the first slot after `now`. */
  pauseSchedule(name: string, now: number): Promise<ScheduleSummary>;
  resumeSchedule(name: string, now: number): Promise<ScheduleSummary>;
  /** Removes a schedule and its slot history (its runs stay); false when there was none. */
  removeSchedule(name: string): Promise<boolean>;
  /** Starts a run of the schedule now (`<name>-<time>-manual`), whatever its timing and overlap. */
  triggerSchedule(name: string, now: number): Promise<RunSummary>;
  /** A schedule's slot history, newest slot first, at most `limit` (default 20). */
  listScheduleSlots(name: string, limit?: number): Promise<ScheduleSlot[]>;
  /** The slot that started a run (`baton status` names it); null for a run no schedule started. */
  scheduleSlotOfRun(runId: string): Promise<ScheduleSlot | null>;
}
