import type { OverlapPolicy } from '../core/schedule/schedule-rules.js';
import type { CommandContext } from '../runtime/commands/context.js';
import {
  listSchedules,
  removeSchedule,
  setSchedulePaused,
  triggerSchedule,
} from '../runtime/commands/schedule-commands.js';
import type { ScheduleView } from '../runtime/schedule-view.js';
import type { RunSummary } from '../runtime/types.js';

/** `baton.schedule(name, workflowOrPlan, options)`: when its slots come and what they do. */
export interface ScheduleApiOptions {
  /** A cron expression ([second] minute hour day-of-month month day-of-week), e.g. "0 8 * * *"; at most once a minute. Give it or `every`. */
  cron?: string;
  /** The IANA time zone of `cron`, e.g. "Asia/Shanghai". Default "UTC". */
  tz?: string;
  /** A fixed interval instead of `cron`: ms, or text such as "5m" or "15m"; 1 min or more. */
  every?: string | number;
  /** The plan's inputs for every run. */
  inputs?: Record<string, string>;
  /** A slot while the previous run still goes: "skip" (default; recorded), "queue" or "allow". */
  overlap?: OverlapPolicy;
  /** Missed slots of this window start after downtime (ms or "5m"; at most 10); "none": only the latest. Default 1 h. */
  catchUp?: string | number;
  /** No slot before this time (ms or ISO 8601 text). */
  startAt?: string | number;
  /** No slot after this time (ms or ISO 8601 text). */
  endAt?: string | number;
  /** The runs' workspace; default the plan's own, else the current folder (as `baton schedule add`). */
  workspace?: string;
  /** Its runs are shadow runs (true) or live ones (false), whatever the plan says (`--shadow`, `--live`). */
  shadow?: boolean;
  /** The labels of its runs, e.g. `{ team: 'growth' }` (`schedule add -l team=growth`). */
  labels?: Record<string, string>;
  /** The claim priority of its runs, 0 to 9, higher first (`schedule add --priority`); default the plan's. */
  priority?: number;
}

/** `baton.schedules`: the schedules of the store. */
export interface ScheduleControls {
  /** Every schedule with its next three slots, last run and missed slots. */
  list(): Promise<ScheduleView[]>;
  pause(name: string): Promise<ScheduleView>;
  /** Goes on from the first slot after now. */
  resume(name: string): Promise<ScheduleView>;
  /** Removes it and its slot history (its runs stay); false when there was none. */
  remove(name: string): Promise<boolean>;
  /** Starts a run of it now (`<name>-<time>-manual`). */
  trigger(name: string): Promise<RunSummary>;
}

/** The controls of `baton.schedules`: the runtime's schedule commands, once the store is open. */
export function scheduleControls(commands: () => Promise<CommandContext>): ScheduleControls {
  return {
    list: async () => listSchedules(await commands()),
    pause: async (name) => setSchedulePaused(await commands(), { name, paused: true }),
    resume: async (name) => setSchedulePaused(await commands(), { name, paused: false }),
    remove: async (name) => (await removeSchedule(await commands(), { name, missingOk: true })).removed,
    trigger: async (name) => triggerSchedule(await commands(), { name }),
  };
}
