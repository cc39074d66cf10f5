import { BatonError, isBatonError } from '../../core/errors.js';
import { validateScheduleName } from '../../core/schedule/schedule-rules.js';
import { scheduleNotFound } from '../../store/schedules/schedule-rows.js';
import type { NewSchedule, RunSummary, ScheduleSlot, ScheduleSummary } from '../../store/store.js';
import {
  CLI_OPTION_NAMES,
  type OptionNames,
  type ScheduleOptions,
  scheduleRules,
} from '../schedule-options.js';
import { type ScheduleSnapshot, type UpdateNames, updatedSchedule } from '../schedule-update.js';
import { listScheduleViews, requireScheduleView, type ScheduleView } from '../schedule-view.js';
import type { CommandContext } from './context.js';
import type { PreparedRun } from './start-commands.js';

/**
 * Schedules, the same for every front door (`baton schedule …`, `Baton.schedule` and
 * `baton.schedules`, the console's buttons, the MCP server's `schedule_*` tools): each a typed
 * request, answered with the schedule's view (masked, as every answer of the command layer).
 */

/** A prepared run's plan snapshot, as a schedule stores it. */
export function scheduleSnapshot(prepared: Pick<PreparedRun, 'run'>): ScheduleSnapshot {
  const { plan, planHash, inputs, workspace } = prepared.run;
  return { plan, planHash, inputs, workspace };
}

export interface AddScheduleRequest {
  name: string;
  snapshot: ScheduleSnapshot;
  /** Its timing and options, as given. */
  options: ScheduleOptions;
  /** How the door names the options, for messages. */
  names?: OptionNames;
  /** Stored paused (a schedule an agent proposed waits for the person's yes). */
  paused?: boolean;
}

/** `baton schedule add`: refused when the name is taken. */
export async function addSchedule(ctx: CommandContext, request: AddScheduleRequest): Promise<ScheduleView> {
  validateScheduleName(request.name);
  const now = ctx.now();
  const rules = scheduleRules(request.options, now, request.names ?? CLI_OPTION_NAMES);
  await ctx.store.addSchedule({
    name: request.name,
    ...request.snapshot,
    rules,
    now,
    ...(request.paused ? { paused: true } : {}),
  });
  ctx.nudge();
  return requireScheduleView(ctx.store, request.name, now);
}

export interface UpdateScheduleRequest {
  name: string;
  /** The timing and options given; the others stay as stored. */
  options: ScheduleOptions;
  /** Whether inputs or a workspace were given: they go with a new plan only. */
  runOptionsGiven: boolean;
  /** The new plan's snapshot, prepared only after the options were checked; none: the plan stays. */
  snapshot?: () => Promise<ScheduleSnapshot>;
  names?: UpdateNames;
  /** Whether the change leaves it paused, running, or as it was (undefined). */
  paused?: boolean;
}

/** `baton schedule update`: the options given replace the stored ones; slots already decided stay decided. */
export async function updateSchedule(
  ctx: CommandContext,
  request: UpdateScheduleRequest,
): Promise<{ view: ScheduleView; wasPaused: boolean }> {
  validateScheduleName(request.name);
  // Read as stored: what is not given (the plan, its inputs) is copied as it is, never masked.
  const current = await ctx.unmasked.getSchedule(request.name);
  if (!current) throw scheduleNotFound(request.name);
  const now = ctx.now();
  const spec: NewSchedule = await updatedSchedule(current, {
    options: request.options,
    runOptionsGiven: request.runOptionsGiven,
    ...(request.snapshot ? { snapshot: request.snapshot } : {}),
    now,
    ...(request.names ? { names: request.names } : {}),
  });
  await ctx.store.replaceSchedule({
    ...spec,
    ...(request.paused === undefined ? {} : { paused: request.paused }),
  });
  ctx.nudge();
  return { view: await requireScheduleView(ctx.store, request.name, now), wasPaused: current.paused };
}

export interface EnsureScheduleRequest {
  name: string;
  /** The plan's snapshot, prepared only after the name and options were checked. */
  snapshot: () => ScheduleSnapshot;
  options: ScheduleOptions;
  names?: OptionNames;
}

/**
 * `Baton.schedule`: stores the schedule idempotently by name: the same plan, inputs, workspace and
 * rules change nothing; any of them changed, the stored schedule takes them.
 */
export async function ensureSchedule(
  ctx: CommandContext,
  request: EnsureScheduleRequest,
): Promise<ScheduleView> {
  validateScheduleName(request.name);
  const now = ctx.now();
  const rules = scheduleRules(request.options, now, request.names ?? CLI_OPTION_NAMES);
  const spec: NewSchedule = { name: request.name, ...request.snapshot(), rules, now };
  const stored = await ctx.unmasked.getSchedule(request.name);
  if (!stored) {
    try {
      await ctx.store.addSchedule(spec);
    } catch (error) {
      // Another process added it first: take the same path as a second call.
      if (!isBatonError(error, 'SCHEDULE_EXISTS')) throw error;
      await ctx.store.replaceSchedule(spec);
    }
  } else if (!sameSchedule(stored, spec)) await ctx.store.replaceSchedule(spec);
  ctx.nudge();
  return requireScheduleView(ctx.store, request.name, now);
}

function sameSchedule(stored: ScheduleSummary, spec: NewSchedule): boolean {
  return (
    stored.planHash === spec.planHash &&
    stored.workspace === spec.workspace &&
    JSON.stringify(stored.inputs) === JSON.stringify(spec.inputs) &&
    JSON.stringify(stored.rules) === JSON.stringify(spec.rules)
  );
}

/** `baton schedule pause|resume <name>`. */
export async function setSchedulePaused(
  ctx: CommandContext,
  request: { name: string; paused: boolean },
): Promise<ScheduleView> {
  const now = ctx.now();
  if (request.paused) await ctx.store.pauseSchedule(request.name, now);
  else {
    await ctx.store.resumeSchedule(request.name, now);
    ctx.nudge();
  }
  return requireScheduleView(ctx.store, request.name, now);
}

/**
 * `baton schedule trigger <name>`: one run now, whatever its timing. `activeOnly`: a paused one is
 * refused (one an agent proposed may never have had the person's yes).
 */
export async function triggerSchedule(
  ctx: CommandContext,
  request: { name: string; activeOnly?: boolean },
): Promise<RunSummary> {
  if (request.activeOnly) {
    const detail = await ctx.store.getSchedule(request.name);
    if (!detail) throw scheduleNotFound(request.name);
    if (detail.paused)
      throw new BatonError(
        'INVALID_TRANSITION',
        `schedule ${request.name} is paused: it runs once the person says yes (schedule_resume), or they start one run themselves with baton schedule trigger ${request.name}`,
      );
  }
  const run = await ctx.store.triggerSchedule(request.name, ctx.now());
  ctx.nudge();
  return run;
}

/**
 * `baton schedule rm <name>`: the schedule and its slot history go; its runs stay. An unknown name
 * is refused, unless `missingOk` (`baton.schedules.remove`, which answers false).
 */
export async function removeSchedule(
  ctx: CommandContext,
  request: { name: string; missingOk?: boolean },
): Promise<{ name: string; removed: boolean }> {
  const removed = await ctx.store.removeSchedule(request.name);
  if (!removed && !request.missingOk) throw scheduleNotFound(request.name);
  return { name: request.name, removed };
}

/** `baton schedule list`: every schedule with its next three slots, last run and missed slots. */
export function listSchedules(ctx: CommandContext): Promise<ScheduleView[]> {
  return listScheduleViews(ctx.store, ctx.now());
}

/** `baton schedule show <name>`: one schedule with its slot history, newest first. */
export async function showSchedule(
  ctx: CommandContext,
  request: { name: string; limit?: number },
): Promise<ScheduleView & { slots: ScheduleSlot[] }> {
  const view = await requireScheduleView(ctx.store, request.name, ctx.now());
  const slots = await ctx.store.listScheduleSlots(request.name, request.limit ?? 20);
  return { ...view, slots };
}
