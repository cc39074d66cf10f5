import '../core-libraries.js';
import { BatonError } from '../../core/errors.js';
import type { Plan } from '../../core/plan/types.js';
import { withPriority } from '../../core/priority.js';
import type { RunStatus } from '../../core/run-state.js';
import type { ScheduleRules } from '../../core/schedule/schedule-rules.js';
import type { ScheduleTickState, SlotOutcome } from '../../core/schedule/schedule-tick.js';
import { SlotClock } from '../../core/schedule/slot-clock.js';
import type { NewRun } from '../store.js';
import type { NewSchedule, ScheduleDetail, ScheduleSlot, ScheduleSummary } from './schedule-types.js';

/** A `schedules` row, the same columns in both dialects (SQLite answers 0/1 for `paused`). */
export interface ScheduleRow {
  name: string;
  plan_name: string;
  plan_json?: string;
  plan_hash: string;
  inputs_json: string;
  workspace: string;
  rules_json: string;
  paused: number | boolean;
  cursor_at: number;
  next_fire_at: number | null;
  queued_slot_at: number | null;
  last_run_id: string | null;
  /** The status of `last_run_id` now (a join): null when none or no longer stored. */
  last_status: RunStatus | null;
  created_at: number;
  updated_at: number;
}

/** A `schedule_slots` row, with its run's status now (a join). */
export interface SlotRow {
  schedule: string;
  manual: number | boolean;
  slot_at: number;
  outcome: SlotOutcome;
  run_id: string | null;
  reason: string | null;
  slot_count: number;
  last_slot_at: number;
  recorded_at: number;
  run_status: RunStatus | null;
}

/** The columns every schedule read selects (`s` the schedule, its last run's status joined). */
export function scheduleColumns(schema = ''): string {
  return `s.name, s.plan_name, s.plan_hash, s.inputs_json, s.workspace, s.rules_json, s.paused, s.cursor_at,
    s.next_fire_at, s.queued_slot_at, s.last_run_id, s.created_at, s.updated_at,
    (SELECT r.status FROM ${schema}runs r WHERE r.id = s.last_run_id) AS last_status`;
}

/** The columns of a slot row (`schedule_slots l`) with its run's status; `schema` as scheduleColumns. */
export function slotColumns(schema = ''): string {
  return `l.schedule, l.manual, l.slot_at, l.outcome, l.run_id, l.reason, l.slot_count, l.last_slot_at,
    l.recorded_at, (SELECT r.status FROM ${schema}runs r WHERE r.id = l.run_id) AS run_status`;
}

export function scheduleFromRow(row: ScheduleRow): ScheduleSummary {
  return {
    name: row.name,
    planName: row.plan_name,
    planHash: row.plan_hash,
    inputs: JSON.parse(row.inputs_json) as Record<string, string>,
    workspace: row.workspace,
    rules: JSON.parse(row.rules_json) as ScheduleRules,
    paused: row.paused === true || row.paused === 1,
    nextFireAt: row.next_fire_at,
    queuedSlotAt: row.queued_slot_at,
    lastRun: row.last_run_id === null ? null : { id: row.last_run_id, status: row.last_status },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function scheduleDetailFromRow(row: ScheduleRow & { plan_json: string }): ScheduleDetail {
  return { ...scheduleFromRow(row), plan: JSON.parse(row.plan_json) as Plan };
}

export function slotFromRow(row: SlotRow): ScheduleSlot {
  return {
    schedule: row.schedule,
    manual: row.manual === true || row.manual === 1,
    slotAt: row.slot_at,
    outcome: row.outcome,
    runId: row.run_id,
    reason: row.reason,
    count: row.slot_count,
    lastSlotAt: row.last_slot_at,
    recordedAt: row.recorded_at,
    runStatus: row.run_status,
  };
}

/** What a tick reads of a due schedule. */
export function tickStateOf(row: ScheduleRow): ScheduleTickState {
  return {
    name: row.name,
    rules: JSON.parse(row.rules_json) as ScheduleRules,
    cursorAt: row.cursor_at,
    queuedSlotAt: row.queued_slot_at,
    lastRun: row.last_run_id === null ? null : { id: row.last_run_id, status: row.last_status },
  };
}

/** A `schedules` row with its plan snapshot: what a tick, a trigger and a command read. */
export type ScheduleRowWithPlan = ScheduleRow & { plan_json: string };

/** The run a slot starts: the schedule's plan snapshot, inputs and workspace under the slot's run id. */
export function slotRun(row: ScheduleRowWithPlan, runId: string, now: number): NewRun {
  const rules = JSON.parse(row.rules_json) as ScheduleRules;
  return {
    id: runId,
    plan: slotPlan(JSON.parse(row.plan_json) as Plan, rules),
    planHash: row.plan_hash,
    inputs: JSON.parse(row.inputs_json) as Record<string, string>,
    workspace: row.workspace,
    now,
    ...(rules.labels ? { labels: rules.labels } : {}),
  };
}

/**
 * The plan a slot's run gets: the schedule's `shadow` (--shadow, --live) over the plan's own, and
 * the schedule's `priority` (--priority) over the plan's.
 */
function slotPlan(plan: Plan, rules: ScheduleRules): Plan {
  const prioritized = rules.priority === undefined ? plan : withPriority(plan, rules.priority);
  if (rules.shadow === undefined || rules.shadow === (prioritized.shadow === true)) return prioritized;
  if (rules.shadow) return { ...prioritized, shadow: true };
  const { shadow: _shadow, ...live } = prioritized;
  return live;
}

/**
 * The next slot a schedule stores: none while it is paused (a paused schedule decides no slot, and
 * `next_fire_at` null keeps it out of the schedules_due index), else `next()`. The one place that
 * says so: adding, replacing, pausing, resuming and ticking a schedule all store through it.
 */
export function storedNextFire(paused: boolean | number, next: () => number | null): number | null {
  return paused ? null : next();
}

/** The stored values of a new or replaced schedule: its first slot is the first after `cursorAt`. */
export interface ScheduleValues {
  name: string;
  planName: string;
  planJson: string;
  planHash: string;
  inputsJson: string;
  workspace: string;
  rulesJson: string;
  paused: boolean;
  cursorAt: number;
  nextFireAt: number | null;
  now: number;
}

/** A new schedule's values (`baton schedule add`): stored paused when `spec.paused`, else active. */
export function scheduleValues(
  spec: NewSchedule,
  cursorAt = spec.now,
  paused = spec.paused === true,
): ScheduleValues {
  return {
    name: spec.name,
    planName: spec.plan.name,
    planJson: JSON.stringify(spec.plan),
    planHash: spec.planHash,
    inputsJson: JSON.stringify(spec.inputs),
    workspace: spec.workspace,
    rulesJson: JSON.stringify(spec.rules),
    paused,
    cursorAt,
    nextFireAt: storedNextFire(paused, () => new SlotClock(spec.rules).next(cursorAt)),
    now: spec.now,
  };
}

/**
 * A replaced schedule's values (`baton schedule update`) over its stored row: slots already decided
 * stay decided (the cursor never goes back), and it keeps its pause state unless `spec` says.
 */
export function replacedValues(row: ScheduleRow, spec: NewSchedule): ScheduleValues {
  return scheduleValues(spec, Math.max(row.cursor_at, spec.now), spec.paused ?? Boolean(row.paused));
}

/** What pausing or resuming writes of a schedule, at `at`. */
export interface PauseChange {
  paused: boolean;
  cursorAt: number;
  nextFireAt: number | null;
  at: number;
}

/**
 * Pausing or resuming the schedule `row` at `now`; null when it is in that state already. Resumed,
 * it goes on from now: the slots of the pause are not made up.
 */
export function pauseChange(row: ScheduleRow, paused: boolean, now: number): PauseChange | null {
  if (Boolean(row.paused) === paused) return null;
  const cursorAt = paused ? row.cursor_at : Math.max(row.cursor_at, now);
  const rules = JSON.parse(row.rules_json) as ScheduleRules;
  return {
    paused,
    cursorAt,
    nextFireAt: storedNextFire(paused, () => new SlotClock(rules).next(cursorAt)),
    at: now,
  };
}

export function scheduleNotFound(name: string): BatonError {
  return new BatonError(
    'SCHEDULE_NOT_FOUND',
    `no schedule named "${name}" (list them with: baton schedule list)`,
  );
}

export function scheduleExists(name: string): BatonError {
  return new BatonError(
    'SCHEDULE_EXISTS',
    `a schedule named "${name}" exists already: change it with baton schedule update ${name} (--plan <file>, --cron, --every, …), or remove it with baton schedule rm ${name}`,
  );
}

/** `baton schedule trigger` twice within one second: the run id of the first is taken. */
export function triggerTaken(runId: string): BatonError {
  return new BatonError(
    'INVALID_ARGUMENT',
    `a run with id "${runId}" exists already (triggered within the same second): trigger again in a second`,
  );
}
