import { slotsDueBy } from '../../core/check-horizon.js';
import { SLOT_RUNS_PER_CYCLE } from '../../core/schedule/schedule-rules.js';
import type { CycleRequest, CycleResult } from '../store.js';

/**
 * At most this many due schedules are ticked per cycle (and at most SLOT_RUNS_PER_CYCLE runs started);
 * more make the engine look again at once. Each is decided in the cycle's transaction.
 */
export const SCHEDULE_TICK_BATCH = 100;
/** How often (ms of the request clock) a cycle looks for schedules other processes added or changed. */
export const SCHEDULE_LOOK_MS = 250;

/** The next slot of any schedule (null: none), and whether any slot waits for its run (overlap queue). */
export interface NextFire {
  at: number | null;
  queued: boolean;
}

/**
 * When a cycle looks at the schedules: whenever the next slot it knows of has come, and otherwise
 * at most every SCHEDULE_LOOK_MS (a schedule added, resumed or changed by another process, a queued
 * slot whose run ended), so a cycle with nothing due usually costs no query for them at all.
 */
export class ScheduleLook {
  private knownNext: number | null = null;
  private lookedAt = Number.NEGATIVE_INFINITY;
  private queued = false;

  /**
   * Whether a cycle at `now` should look (and tick what is due). A cycle that commits finished
   * attempts looks too while a slot is queued: the run it waits for may have ended in it.
   */
  due(now: number, completions: number): boolean {
    return (
      (this.knownNext !== null && now >= this.knownNext) ||
      now - this.lookedAt >= SCHEDULE_LOOK_MS ||
      (this.queued && completions > 0)
    );
  }

  /** After a look at `now`: the next slot of any schedule (null: none), and whether a slot is queued. */
  looked(now: number, next: NextFire): void {
    this.lookedAt = now;
    this.knownNext = next.at;
    this.queued = next.queued;
  }

  /** This process changed a schedule: the next cycle looks. */
  changed(): void {
    this.lookedAt = Number.NEGATIVE_INFINITY;
  }
}

/** What a cycle's tick may do: decide the slots due by `dueBy`, start at most `runLimit` runs. */
export interface TickBounds {
  now: number;
  dueBy: number;
  runLimit: number;
  /** The check's bound is the one in force: a schedule left over waits for the next check. */
  checkBound: boolean;
}

/** The bounds of the tick of a cycle `request` (core/check-horizon.ts, SLOT_RUNS_PER_CYCLE). */
export function tickBounds(request: CycleRequest): TickBounds {
  const checkLeft = request.slotRunsLeft ?? Number.POSITIVE_INFINITY;
  return {
    now: request.now,
    dueBy: slotsDueBy(request),
    runLimit: Math.min(SLOT_RUNS_PER_CYCLE, Math.max(0, checkLeft)),
    checkBound: checkLeft <= SLOT_RUNS_PER_CYCLE,
  };
}

/** What a dialect's tick did: runs started, a due schedule left for the bound (`full`), a full batch (`more`). */
export interface TickOutcome {
  started: number;
  full: boolean;
  more: boolean;
}

/** The tick of a cycle that may start no run (a check that started its bound): none is decided. */
export const NO_TICK: TickOutcome = { started: 0, full: false, more: false };

/**
 * A cycle's result after its tick (NO_TICK when `bounds.runLimit` is 0), with `next`, the next slot
 * of any schedule after it; `look` learns when to look again. Runs started, or schedules left by the
 * cycle's own bounds, make the engine look again at once (settledUnclaimed). Schedules left due by a
 * check's bound are reported (`slotsLeft`), and are no progress: the check ends.
 */
export function afterTick(
  result: CycleResult,
  tick: TickOutcome,
  bounds: TickBounds,
  look: ScheduleLook,
  next: NextFire,
): CycleResult {
  const again = tick.more || (tick.full && !bounds.checkBound);
  const dueLeft = next.at !== null && next.at <= bounds.dueBy;
  const left = bounds.checkBound && (tick.full || (bounds.runLimit === 0 && dueLeft));
  // A check decides no slot after its start, nor past its bound: neither is a reason to look at every
  // cycle (the look every SCHEDULE_LOOK_MS stays).
  const known =
    left || (next.at !== null && next.at > bounds.dueBy && bounds.dueBy < bounds.now) ? null : next.at;
  look.looked(bounds.now, { ...next, at: again ? bounds.now : known });
  return {
    ...result,
    ...(tick.started > 0 || again ? { settledUnclaimed: true } : {}),
    ...(tick.started > 0 ? { slotRunsStarted: tick.started } : {}),
    ...(left ? { slotsLeft: true } : {}),
  };
}
