import '../store/core-libraries.js';
import type { RunStatus } from '../core/run-state.js';
import type { ScheduleRules } from '../core/schedule/schedule-rules.js';
import { SlotClock, timingText } from '../core/schedule/slot-clock.js';
import { scheduleNotFound } from '../store/schedules/schedule-rows.js';
import type { ScheduleDetail, ScheduleSlot, ScheduleSummary, Store } from '../store/store.js';

/** The refusal of a name no schedule has (a door says it without a store when there is none yet). */
export { scheduleNotFound };

/** How many slots of its history `schedule list` reads per schedule (for the missed ones). */
const HISTORY_READ = 50;

/** A schedule as `baton schedule list`, the console and `baton.schedules.list()` show it. */
export interface ScheduleView extends ScheduleSummary {
  /** In words: `cron "0 8 * * *" (Asia/Shanghai)` or `every 30s`. */
  timing: string;
  /** Its next three slots (none while paused). */
  nextFireTimes: number[];
  /** Its newest run and that run's status now; null: none yet. */
  lastRun: { id: string; status: RunStatus | null } | null;
  /** Slots recorded as missed in its recent history (a range counts each slot). */
  missedSlots: number;
  /** Slots recorded as skipped in its recent history. */
  skippedSlots: number;
}

/** The next `count` slots of rules after `from`. */
export function nextFireTimes(rules: ScheduleRules, from: number, count: number): number[] {
  return new SlotClock(rules).nextSlots(from, count);
}

export function scheduleView(
  summary: ScheduleSummary,
  history: readonly ScheduleSlot[],
  now: number,
): ScheduleView {
  // From the next slot stored, which a tick may not have reached yet.
  const from = summary.nextFireAt === null ? now : summary.nextFireAt - 1;
  return {
    ...summary,
    timing: timingText(summary.rules.timing),
    nextFireTimes: summary.paused || summary.nextFireAt === null ? [] : nextFireTimes(summary.rules, from, 3),
    missedSlots: history.filter((s) => s.outcome === 'missed').reduce((n, s) => n + Math.max(s.count, 1), 0),
    skippedSlots: history.filter((s) => s.outcome === 'skipped').length,
  };
}

/** Every schedule with its next slots and recent history: `schedule list`, the console, the API. */
export async function listScheduleViews(store: Store, now: number): Promise<ScheduleView[]> {
  const schedules = await store.listSchedules();
  return Promise.all(schedules.map((s) => scheduleViewOf(store, s, now)));
}

/** The view of one stored schedule, read with its recent history; a detail's plan is left out. */
export async function scheduleViewOf(
  store: Store,
  schedule: ScheduleSummary | ScheduleDetail,
  now: number,
): Promise<ScheduleView> {
  const summary: ScheduleSummary = 'plan' in schedule ? withoutPlan(schedule) : schedule;
  return scheduleView(summary, await store.listScheduleSlots(schedule.name, HISTORY_READ), now);
}

function withoutPlan({ plan: _plan, ...summary }: ScheduleDetail): ScheduleSummary {
  return summary;
}

/** One schedule's view (`schedule show`, and after each change); SCHEDULE_NOT_FOUND when there is none. */
export async function requireScheduleView(store: Store, name: string, now: number): Promise<ScheduleView> {
  const schedule = await store.getSchedule(name);
  if (!schedule) throw scheduleNotFound(name);
  return scheduleViewOf(store, schedule, now);
}

/** One slot as `schedule preview --json` and the MCP server's `schedule_preview` give it. */
export interface FireTime {
  /** ISO 8601 in UTC. */
  at: string;
  /** The wall clock in `tz`: 2026-12-03 08:00:00. */
  local: string;
  tz: string;
}

/** The next `count` slots of rules after `from`, in UTC and as the wall clock of their time zone. */
export function previewFireTimes(rules: ScheduleRules, from: number, count: number): FireTime[] {
  const tz = 'cron' in rules.timing ? rules.timing.tz : 'UTC';
  return nextFireTimes(rules, from, count).map((at) => ({
    at: new Date(at).toISOString(),
    local: localTime(at, tz),
    tz,
  }));
}

/** A time as a wall clock in `tz`: 2026-12-03 08:00:00. */
function localTime(at: number, tz: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: tz,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}:${get('second')}`;
}

/** What a schedule's runs are when it says so itself (`--shadow`, `--live`): the text its views show. */
export function scheduleRunsText(rules: ScheduleRules): string {
  return rules.shadow === undefined ? '' : rules.shadow ? 'shadow runs' : 'live runs';
}

/** How far back in each schedule's history the run of a slot is looked for. */
const SLOT_MATCH_READ = 1000;

/** The other run of a run's schedule slot: the live one of a shadow run, or the reverse. */
export interface SlotCounterpart {
  /** The slot that started the run asked about. */
  slot: ScheduleSlot;
  /** Whether the run asked about is a shadow run. */
  shadow: boolean;
  /** The run of another schedule of the same plan, for the same slot time, live if `shadow` (else shadow); null: none. */
  runId: string | null;
  /** The schedule that started it. */
  schedule: string | null;
}

/**
 * For `baton diff <run>`: the run a schedule of the same plan started for the same slot time as
 * this one, on the other side (a shadow schedule beside a live one on the same timing). Null when
 * no schedule's slot started this run.
 */
export async function slotCounterpart(store: Store, runId: string): Promise<SlotCounterpart | null> {
  const slot = await store.scheduleSlotOfRun(runId);
  const run = slot === null ? null : await store.getRun(runId);
  if (slot === null || run === null) return null;
  const shadow = run.plan.shadow === true;
  for (const schedule of await store.listSchedules()) {
    if (schedule.name === slot.schedule || schedule.planName !== run.planName) continue;
    for (const other of await store.listScheduleSlots(schedule.name, SLOT_MATCH_READ)) {
      if (other.slotAt < slot.slotAt) break;
      if (other.slotAt !== slot.slotAt || other.manual || other.runId === null) continue;
      const candidate = await store.getRun(other.runId);
      if (candidate && (candidate.plan.shadow === true) !== shadow)
        return { slot, shadow, runId: other.runId, schedule: schedule.name };
    }
  }
  return { slot, shadow, runId: null, schedule: null };
}
