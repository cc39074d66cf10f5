import '../core-libraries.js';
import { triggerRunId } from '../../core/schedule/schedule-rules.js';
import {
  decideTick,
  type ScheduleTick,
  type SlotRecord,
  ticksWithin,
} from '../../core/schedule/schedule-tick.js';
import type { CycleRequest, CycleResult } from '../contract/claims.js';
import type { NewRun } from '../contract/runs.js';
import {
  afterTick,
  type NextFire,
  NO_TICK,
  SCHEDULE_TICK_BATCH,
  type ScheduleLook,
  type TickBounds,
  type TickOutcome,
  tickBounds,
} from '../schedules/schedule-look.js';
import {
  type ScheduleRowWithPlan,
  scheduleNotFound,
  slotRun,
  storedNextFire,
  tickStateOf,
  triggerTaken,
} from '../schedules/schedule-rows.js';
import { andThen, type Maybe } from './maybe-async.js';

/**
 * What a tick (or a trigger) asks of a dialect inside the caller's transaction: find and lock
 * schedule rows, look run ids up, write what was decided. SQLite answers at once, PostgreSQL later.
 */
export interface ScheduleTickRows {
  /**
   * Schedules with a slot come by `dueBy` (at most `limit`, earliest first: schedules/slots-due.ts)
   * and those with a queued slot whose run ended, locked for this transaction; `more`: the batch
   * was full, more may be due.
   */
  dueSchedules(dueBy: number, limit: number): Maybe<{ rows: ScheduleRowWithPlan[]; more: boolean }>;
  /** The schedule `name`, locked for this transaction; null: none. */
  lockSchedule(name: string): Maybe<ScheduleRowWithPlan | null>;
  /** Which of these run ids exist already. */
  takenRunIds(ids: readonly string[]): Maybe<ReadonlySet<string>>;
  /** Stores the runs started, records the slots and moves each schedule's cursor. */
  writeTick(write: ScheduleWrite): Maybe<void>;
  /** The next slot of any schedule, and whether a slot is queued. */
  nextFire(): Maybe<NextFire>;
}

/** What a tick or a trigger writes, in one transaction. */
export interface ScheduleWrite {
  runs: NewRun[];
  slots: { schedule: string; manual: boolean; record: SlotRecord }[];
  cursors: ScheduleCursor[];
  now: number;
}

/** A schedule's state after a tick (or a trigger, which only names its last run). */
export interface ScheduleCursor {
  name: string;
  cursorAt: number;
  nextFireAt: number | null;
  queuedSlotAt: number | null;
  lastRunId: string | null;
}

/** Whether the cycle `request` ticks the schedules: a cycle of every run, when `look` says it is time. */
export function scheduleTickDue(request: CycleRequest, look: ScheduleLook): boolean {
  return request.runId === undefined && look.due(request.now, request.completions.length);
}

/**
 * A cycle's tick, once for both dialects, after its claims and in its transaction: the due slots of
 * schedules decide their runs within the cycle's bounds (core/schedule/schedule-tick.ts, ticksWithin)
 * and start them; then the next slot of any schedule tells `look` when to look again, and the result
 * says whether the engine should look again at once (afterTick). Each slot is decided once, however
 * many processes cycle: the dialect locks the rows it ticks.
 */
export function tickSchedules(
  rows: ScheduleTickRows,
  request: CycleRequest,
  result: CycleResult,
  look: ScheduleLook,
): Maybe<CycleResult> {
  if (!scheduleTickDue(request, look)) return result;
  const bounds = tickBounds(request);
  const ticked = bounds.runLimit > 0 ? tickDue(rows, bounds) : NO_TICK;
  return andThen(ticked, (tick) =>
    andThen(rows.nextFire(), (next) => afterTick(result, tick, bounds, look, next)),
  );
}

const NONE_TAKEN: ReadonlySet<string> = new Set();

/** Decides the due schedules' slots (by `bounds.dueBy`) and writes those whose runs fit the bounds. */
function tickDue(rows: ScheduleTickRows, bounds: TickBounds): Maybe<TickOutcome> {
  return andThen(rows.dueSchedules(bounds.dueBy, SCHEDULE_TICK_BATCH), (due) => {
    const decided = due.rows.map((row) => ({ row, tick: decideTick(tickStateOf(row), bounds.dueBy) }));
    const ids = decided.flatMap(({ tick }) => tick.starts.map((start) => start.runId));
    return andThen(ids.length === 0 ? NONE_TAKEN : rows.takenRunIds(ids), (taken) => {
      // A slot whose run id exists already (made by hand) is decided again without it.
      const final =
        taken.size === 0
          ? decided
          : decided.map(({ row, tick }) =>
              tick.starts.some((start) => taken.has(start.runId))
                ? { row, tick: decideTick(tickStateOf(row), bounds.dueBy, taken) }
                : { row, tick },
            );
      const { taken: within, full } = ticksWithin(final, bounds.runLimit);
      const write = tickWrite(within, bounds.now);
      const outcome: TickOutcome = { started: write.runs.length, full, more: !full && due.more };
      return within.length === 0 ? outcome : andThen(rows.writeTick(write), () => outcome);
    });
  });
}

/** The runs, slot records and cursors of the schedules a tick took (a paused one stores no next slot). */
function tickWrite(
  taken: readonly { row: ScheduleRowWithPlan; tick: ScheduleTick }[],
  now: number,
): ScheduleWrite {
  const write: ScheduleWrite = { runs: [], slots: [], cursors: [], now };
  for (const { row, tick } of taken) {
    for (const start of tick.starts) write.runs.push(slotRun(row, start.runId, now));
    for (const record of tick.records) write.slots.push({ schedule: row.name, manual: false, record });
    write.cursors.push({
      name: row.name,
      cursorAt: tick.cursorAt,
      nextFireAt: storedNextFire(row.paused, () => tick.nextFireAt),
      queuedSlotAt: tick.queuedSlotAt,
      lastRunId: tick.lastRunId,
    });
  }
  return write;
}

/**
 * `baton schedule trigger`, once for both dialects, in the caller's transaction: a run of the
 * schedule now (`<name>-<time>-manual`), recorded as a manual slot and as the schedule's last run.
 * Throws SCHEDULE_NOT_FOUND, or INVALID_ARGUMENT when that run id is taken (twice in a second).
 */
export function triggerSlot(rows: ScheduleTickRows, name: string, now: number): Maybe<NewRun> {
  return andThen(rows.lockSchedule(name), (row) => {
    if (!row) throw scheduleNotFound(name);
    const runId = triggerRunId(name, now);
    return andThen(rows.takenRunIds([runId]), (taken) => {
      if (taken.size > 0) throw triggerTaken(runId);
      const run = slotRun(row, runId, now);
      const record: SlotRecord = {
        slotAt: now,
        outcome: 'triggered',
        runId,
        reason: null,
        count: 1,
        lastSlotAt: now,
      };
      const write: ScheduleWrite = {
        runs: [run],
        slots: [{ schedule: name, manual: true, record }],
        // Only its last run changes: the rest is written back as the locked row holds it.
        cursors: [
          {
            name,
            cursorAt: row.cursor_at,
            nextFireAt: row.next_fire_at,
            queuedSlotAt: row.queued_slot_at,
            lastRunId: runId,
          },
        ],
        now,
      };
      return andThen(rows.writeTick(write), () => run);
    });
  });
}
