import { FINAL_RUN_STATUSES, type RunStatus } from '../run-state.js';
import { MAX_CATCH_UP_STARTS, type ScheduleRules, slotRunId } from './schedule-rules.js';
import { SlotClock } from './slot-clock.js';

/** What became of a slot: a run started, skipped (overlap), queued (overlap queue), missed (downtime), or triggered by hand. */
export const SLOT_OUTCOMES = ['started', 'skipped', 'queued', 'missed', 'triggered'] as const;
export type SlotOutcome = (typeof SLOT_OUTCOMES)[number];

/** One row of a schedule's slot history. A `missed` row may stand for a range of slots (`count`, `lastSlotAt`). */
export interface SlotRecord {
  slotAt: number;
  outcome: SlotOutcome;
  runId: string | null;
  reason: string | null;
  /** Slots a missed row stands for, from `slotAt` to `lastSlotAt` (null: more than the count cap). */
  count: number;
  lastSlotAt: number;
}

/** A schedule as a tick sees it. */
export interface ScheduleTickState {
  name: string;
  rules: ScheduleRules;
  /** Every slot at or before this time is decided. */
  cursorAt: number;
  /** A slot waiting for the previous run (overlap queue); null: none. */
  queuedSlotAt: number | null;
  /** The schedule's newest run and its status now (null status: no longer stored). */
  lastRun: { id: string; status: RunStatus | null } | null;
}

/** What a tick does to one schedule: the runs to start, the slots to record, the schedule's new state. */
export interface ScheduleTick {
  starts: { slotAt: number; runId: string }[];
  records: SlotRecord[];
  cursorAt: number;
  queuedSlotAt: number | null;
  /** The next slot after this tick; null: none (past `endAt`). */
  nextFireAt: number | null;
  lastRunId: string | null;
}

/**
 * The pure decision of a schedule's tick at `now`: every slot in (cursor, now] is decided once.
 * The newest due slot always starts (a heartbeat that comes late still runs it); older ones start
 * when within the catch-up window, oldest first, at most MAX_CATCH_UP_STARTS in all; the rest are
 * recorded as missed (one row per range). A slot whose previous run is still going follows the
 * overlap policy. `taken`: run ids that exist already (made by hand): such a slot is skipped.
 */
export function decideTick(
  state: ScheduleTickState,
  now: number,
  taken: ReadonlySet<string> = new Set(),
): ScheduleTick {
  const { name, rules } = state;
  const clock = new SlotClock(rules);
  const tick: ScheduleTick = {
    starts: [],
    records: [],
    cursorAt: Math.max(state.cursorAt, now),
    queuedSlotAt: state.queuedSlotAt,
    nextFireAt: null,
    lastRunId: state.lastRun?.id ?? null,
  };
  let last = state.lastRun;
  const busy = () => last !== null && last.status !== null && !FINAL_RUN_STATUSES.has(last.status);
  const start = (slotAt: number, queued = false) => {
    const runId = slotRunId(name, slotAt);
    if (taken.has(runId)) {
      tick.records.push(record(slotAt, 'skipped', null, `a run with id ${runId} already exists`));
      return;
    }
    tick.starts.push({ slotAt, runId });
    tick.records.push(record(slotAt, 'started', runId, queued ? `waited for run ${last?.id}` : null));
    last = { id: runId, status: 'running' };
    tick.lastRunId = runId;
  };

  if (tick.queuedSlotAt !== null && !busy()) {
    start(tick.queuedSlotAt, true);
    tick.queuedSlotAt = null;
  }

  const due = clock.latest(state.cursorAt, now, MAX_CATCH_UP_STARTS).reverse();
  const windowFrom = rules.catchUpMs === null ? Number.POSITIVE_INFINITY : now - rules.catchUpMs;
  const newest = due.length - 1;
  const starting = due.filter((slot, i) => i === newest || slot > windowFrom);
  const firstDue = clock.next(state.cursorAt);
  const oldestStarting = starting[0];
  if (firstDue !== null && oldestStarting !== undefined && firstDue < oldestStarting) {
    const lastMissed = clock.latest(state.cursorAt, oldestStarting - 1, 1)[0] ?? firstDue;
    const count = clock.count(state.cursorAt, lastMissed);
    const reason =
      lastMissed > windowFrom
        ? `more than ${MAX_CATCH_UP_STARTS} slots were due at once`
        : rules.catchUpMs === null
          ? 'catch-up is none: only the latest due slot starts'
          : `older than the catch-up window of ${rules.catchUpMs / 1000}s`;
    tick.records.push({
      ...record(firstDue, 'missed', null, reason),
      count: count ?? -1,
      lastSlotAt: lastMissed,
    });
  }

  for (const slotAt of starting) {
    if (rules.overlap === 'allow' || !busy()) start(slotAt);
    else if (rules.overlap === 'queue' && tick.queuedSlotAt === null) {
      tick.queuedSlotAt = slotAt;
      tick.records.push(record(slotAt, 'queued', null, `waits for run ${last?.id} to end`));
    } else {
      const why =
        rules.overlap === 'queue'
          ? `a slot already waits for run ${last?.id}`
          : `run ${last?.id} was still ${last?.status}`;
      tick.records.push(record(slotAt, 'skipped', null, why));
    }
  }
  tick.nextFireAt = clock.next(tick.cursorAt);
  return tick;
}

function record(
  slotAt: number,
  outcome: SlotOutcome,
  runId: string | null,
  reason: string | null,
): SlotRecord {
  return { slotAt, outcome, runId, reason, count: 1, lastSlotAt: slotAt };
}

/**
 * The decided ticks of one cycle, in order, as far as their runs fit in `runLimit`: a schedule's tick
 * is whole (every slot it decides, or none), so the first that does not fit ends the cycle's tick,
 * and it and those after it stay due. `full`: one did not fit.
 */
export function ticksWithin<T extends { tick: ScheduleTick }>(
  decided: readonly T[],
  runLimit: number,
): { taken: T[]; full: boolean } {
  let left = runLimit;
  for (const [i, entry] of decided.entries()) {
    if (entry.tick.starts.length > left) return { taken: decided.slice(0, i), full: true };
    left -= entry.tick.starts.length;
  }
  return { taken: [...decided], full: false };
}
