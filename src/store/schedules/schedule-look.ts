/** At most this many due schedules are ticked per cycle; more make the engine look again at once. */
export const SCHEDULE_TICK_BATCH = 1000;
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
