import { BatonError } from '../core/errors.js';
import type { NewSchedule, ScheduleDetail } from '../store/store.js';
import {
  CLI_OPTION_NAMES,
  type OptionNames,
  type ScheduleOptions,
  scheduleRules,
} from './schedule-options.js';

/** A schedule's plan snapshot, prepared as a run would be (`preparePlanRun`). */
export type ScheduleSnapshot = Pick<NewSchedule, 'plan' | 'planHash' | 'inputs' | 'workspace'>;

/** How a front door names the plan and the run options of an update, for its messages. */
export interface UpdateNames extends OptionNames {
  plan: string;
  runOptions: string;
}

export const CLI_UPDATE_NAMES: UpdateNames = {
  ...CLI_OPTION_NAMES,
  plan: '--plan <file>',
  runOptions: '--input and --workspace',
};

export interface ScheduleUpdate {
  /** The timing and options given; those not given stay as stored. */
  options: ScheduleOptions;
  /** Whether inputs or a workspace were given: they go with a new plan only. */
  runOptionsGiven: boolean;
  /** The new plan's snapshot, prepared only after the options were checked; none: the plan stays. */
  snapshot?: () => Promise<ScheduleSnapshot>;
  now: number;
  names?: UpdateNames;
}

/**
 * The schedule `baton schedule update` and the MCP server's `schedule_update` store: the options
 * given replace the stored ones (a new timing replaces cron, tz and every together; tz alone
 * re-zones a stored cron), the others stay; a new plan brings its snapshot. Bad input throws a
 * BatonError naming the option before anything is stored. The spec says nothing of `paused`: the
 * caller decides whether a replacement pauses it (a store replacement keeps its state).
 */
export async function updatedSchedule(current: ScheduleDetail, update: ScheduleUpdate): Promise<NewSchedule> {
  const given = update.options;
  const names = update.names ?? CLI_UPDATE_NAMES;
  const timingGiven = given.cron !== undefined || given.every !== undefined;
  const old = current.rules;
  const merged: ScheduleOptions = {
    ...(timingGiven
      ? { cron: given.cron, every: given.every, tz: given.tz }
      : 'cron' in old.timing
        ? { cron: old.timing.cron, tz: given.tz ?? old.timing.tz }
        : { every: old.timing.everyMs }),
    overlap: given.overlap ?? old.overlap,
    catchUp: given.catchUp ?? (old.catchUpMs === null ? 'none' : old.catchUpMs),
    ...(given.startAt !== undefined
      ? { startAt: given.startAt }
      : old.startAt === null
        ? {}
        : { startAt: old.startAt }),
    ...(given.endAt !== undefined ? { endAt: given.endAt } : old.endAt === null ? {} : { endAt: old.endAt }),
    ...((given.shadow ?? old.shadow) === undefined ? {} : { shadow: given.shadow ?? old.shadow }),
    ...((given.labels ?? old.labels) === undefined ? {} : { labels: given.labels ?? old.labels }),
    ...((given.priority ?? old.priority) === undefined ? {} : { priority: given.priority ?? old.priority }),
  };
  const rules = scheduleRules(merged, update.now, names);
  if (!update.snapshot) {
    if (update.runOptionsGiven)
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${names.runOptions} go with ${names.plan}: give the plan again`,
      );
    const { name, plan, planHash, inputs, workspace } = current;
    return { name, plan, planHash, inputs, workspace, rules, now: update.now };
  }
  return { name: current.name, ...(await update.snapshot()), rules, now: update.now };
}
