import type { Plan } from '../../core/plan/types.js';
import type { RunStatus } from '../../core/run-state.js';
import type { ScheduleRules } from '../../core/schedule/schedule-rules.js';
import type { SlotRecord } from '../../core/schedule/schedule-tick.js';

/** A schedule to store (`baton schedule add`, `baton.schedule`): its plan snapshot, as a run would be started, and its rules. */
export interface NewSchedule {
  name: string;
  plan: Plan;
  planHash: string;
  inputs: Record<string, string>;
  /** Absolute path of the folder every run of the schedule works in. */
  workspace: string;
  rules: ScheduleRules;
  now: number;
  /**
   * Stored paused, in the same write (no slot is decided until it is resumed): true for a schedule
   * a person has yet to approve (the MCP server's schedule_add, a new plan through schedule_update).
   * Default: added active; replaced, it keeps its state.
   */
  paused?: boolean;
}

/** A stored schedule as the reads return it. */
export interface ScheduleSummary {
  name: string;
  planName: string;
  planHash: string;
  inputs: Record<string, string>;
  workspace: string;
  rules: ScheduleRules;
  paused: boolean;
  /** The next slot (null: paused, or past its end). */
  nextFireAt: number | null;
  /** A slot waiting for the previous run to end (overlap queue). */
  queuedSlotAt: number | null;
  /** The newest run the schedule started, with its status now (null: no longer stored). */
  lastRun: { id: string; status: RunStatus | null } | null;
  createdAt: number;
  updatedAt: number;
}

export interface ScheduleDetail extends ScheduleSummary {
  plan: Plan;
}

/** One row of a schedule's slot history (`listScheduleSlots`), with its run's status now. */
export interface ScheduleSlot extends SlotRecord {
  schedule: string;
  /** A run started by `baton schedule trigger`, not a slot of the timing. */
  manual: boolean;
  recordedAt: number;
  runStatus: RunStatus | null;
}
