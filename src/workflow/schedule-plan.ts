import { isBatonError } from '../core/errors.js';
import type { Plan } from '../core/plan/types.js';
import type { OverlapPolicy } from '../core/schedule/schedule-rules.js';
import { validateScheduleName } from '../core/schedule/schedule-rules.js';
import { API_OPTION_NAMES, scheduleRules } from '../runtime/schedule-options.js';
import { listScheduleViews, requireScheduleView, type ScheduleView } from '../runtime/schedule-view.js';
import type { NewSchedule, RunSummary, ScheduleSummary, Store } from '../store/store.js';
import { prepareApiRun, type StartingBaton } from './start-plan-run.js';

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
  /** The runs' workspace; default the plan's own, else the Baton home. */
  workspace?: string;
}

/** `baton.schedules`: the schedules of the store. */
export interface ScheduleControls {
  /** Every schedule with its next three slots, last run and missed slots. */
  list(): Promise<ScheduleView[]>;
  pause(name: string): Promise<ScheduleSummary>;
  /** Goes on from the first slot after now. */
  resume(name: string): Promise<ScheduleSummary>;
  /** Removes it and its slot history (its runs stay); false when there was none. */
  remove(name: string): Promise<boolean>;
  /** Starts a run of it now (`<name>-<time>-manual`). */
  trigger(name: string): Promise<RunSummary>;
}

/**
 * Stores the schedule, idempotently by name: called again with the same plan, inputs, workspace and
 * rules, it changes nothing; with any of them changed, the stored schedule takes them (slots already
 * decided stay decided). Bad options throw a BatonError before anything is stored.
 */
export async function ensureSchedule(
  store: Store,
  baton: StartingBaton,
  name: string,
  plan: Plan,
  options: ScheduleApiOptions,
): Promise<ScheduleView> {
  validateScheduleName(name);
  const now = Date.now();
  const rules = scheduleRules(options, now, API_OPTION_NAMES);
  const run = prepareApiRun(baton, plan, options.inputs ?? {}, {
    ...(options.workspace === undefined ? {} : { workspace: options.workspace }),
  });
  const spec: NewSchedule = {
    name,
    plan: run.plan,
    planHash: run.planHash,
    inputs: run.inputs,
    workspace: run.workspace,
    rules,
    now,
  };
  const stored = await store.getSchedule(name);
  if (!stored) {
    try {
      await store.addSchedule(spec);
    } catch (error) {
      // Another process added it first: take the same path as a second call.
      if (!isBatonError(error, 'SCHEDULE_EXISTS')) throw error;
      await store.replaceSchedule(spec);
    }
  } else if (!sameSchedule(stored, spec)) await store.replaceSchedule(spec);
  return requireScheduleView(store, name, now);
}

function sameSchedule(stored: ScheduleSummary, spec: NewSchedule): boolean {
  return (
    stored.planHash === spec.planHash &&
    stored.workspace === spec.workspace &&
    JSON.stringify(stored.inputs) === JSON.stringify(spec.inputs) &&
    JSON.stringify(stored.rules) === JSON.stringify(spec.rules)
  );
}

/** The controls of `baton.schedules`, over the store once it is open. */
export function scheduleControls(opening: () => Promise<Store>, nudge: () => void): ScheduleControls {
  return {
    list: async () => listScheduleViews(await opening(), Date.now()),
    pause: async (name) => (await opening()).pauseSchedule(name, Date.now()),
    resume: async (name) => {
      const resumed = await (await opening()).resumeSchedule(name, Date.now());
      nudge();
      return resumed;
    },
    remove: async (name) => (await opening()).removeSchedule(name),
    trigger: async (name) => {
      const run = await (await opening()).triggerSchedule(name, Date.now());
      nudge();
      return run;
    },
  };
}
