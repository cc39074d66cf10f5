import type { Cron } from 'croner';
import { BatonError } from '../errors.js';
import { MIN_INTERVAL_MS, type ScheduleRules, type ScheduleTiming } from './schedule-rules.js';

/** The constructor of croner's Cron. */
export type CronLibrary = typeof import('croner').Cron;

/**
 * croner, handed in by the layers that tick, list or check schedules (store/core-libraries.ts),
 * which require it the first time a schedule needs it: the core loads nothing, and most processes
 * have no schedule.
 */
let loadCron: (() => CronLibrary) | undefined;
let cronClass: CronLibrary | undefined;

/** Hands the core the loader of croner (the first one given is kept). */
export function provideCron(load: () => CronLibrary): void {
  loadCron ??= load;
}

function cronLibrary(): CronLibrary {
  if (!cronClass) {
    // A bug of the caller's layer, not bad input.
    if (!loadCron)
      throw new Error('croner was not provided: import store/core-libraries.js before using schedules');
    cronClass = loadCron();
  }
  return cronClass;
}

/**
 * Missed slots of a cron expression counted one by one up to this many (then "more than"): each is a
 * croner call (tens of µs), and a tick counts them inside its cycle's transaction.
 */
export const MISSED_COUNT_CAP = 1000;

/**
 * When a schedule's slots come: a cron expression in its time zone through croner (daylight-saving
 * done by the library: a slot in a skipped hour fires once, at the first valid time after it; a
 * slot in a repeated hour fires once, at its first occurrence), or an interval counted from the
 * epoch (or from `startAt`). Every time is an instant, ms since the epoch; slots before `startAt`
 * or after `endAt` do not exist.
 */
export class SlotClock {
  private readonly cron: Cron | null;
  private readonly everyMs: number;
  private readonly anchor: number;
  private readonly startAt: number;
  private readonly endAt: number;

  constructor(rules: Pick<ScheduleRules, 'timing' | 'startAt' | 'endAt'>) {
    const { timing } = rules;
    this.cron = 'cron' in timing ? compileCron(timing.cron, timing.tz, '--cron') : null;
    this.everyMs = 'everyMs' in timing ? timing.everyMs : 0;
    this.anchor = rules.startAt ?? 0;
    this.startAt = rules.startAt ?? Number.MIN_SAFE_INTEGER;
    this.endAt = rules.endAt ?? Number.MAX_SAFE_INTEGER;
  }

  /** The first slot strictly after `after`; null when there is none (past `endAt`, or a cron that never fires). */
  next(after: number): number | null {
    const from = Math.max(after, this.startAt - 1);
    let slot: number | null;
    if (this.cron) slot = this.cron.nextRun(new Date(from))?.getTime() ?? null;
    else {
      const k = from < this.anchor ? 0 : Math.floor((from - this.anchor) / this.everyMs) + 1;
      slot = this.anchor + k * this.everyMs;
    }
    return slot === null || slot > this.endAt ? null : slot;
  }

  /** The next `count` slots after `after`, in order. */
  nextSlots(after: number, count: number): number[] {
    const slots: number[] = [];
    let at = after;
    while (slots.length < count) {
      const slot = this.next(at);
      if (slot === null) break;
      slots.push(slot);
      at = slot;
    }
    return slots;
  }

  /** Up to `count` slots in (`after`, `upTo`], newest first. */
  latest(after: number, upTo: number, count: number): number[] {
    const to = Math.min(upTo, this.endAt);
    const from = Math.max(after, this.startAt - 1);
    if (to <= from) return [];
    const slots: number[] = [];
    if (this.cron) {
      for (const date of this.cron.previousRuns(count, new Date(to + 1))) {
        const slot = date.getTime();
        if (slot <= from) break;
        slots.push(slot);
      }
      return slots;
    }
    if (to < this.anchor) return [];
    let slot = this.anchor + Math.floor((to - this.anchor) / this.everyMs) * this.everyMs;
    while (slots.length < count && slot > from) {
      slots.push(slot);
      slot -= this.everyMs;
    }
    return slots;
  }

  /** How many slots lie in (`after`, `upTo`]; a cron's are counted up to MISSED_COUNT_CAP (null: more). */
  count(after: number, upTo: number): number | null {
    if (!this.cron) {
      const first = this.next(after);
      if (first === null || first > upTo) return 0;
      const last = this.latest(after, upTo, 1)[0] ?? first;
      return Math.floor((last - first) / this.everyMs) + 1;
    }
    let n = 0;
    let at = after;
    for (;;) {
      const slot = this.next(at);
      if (slot === null || slot > upTo) return n;
      if (++n > MISSED_COUNT_CAP) return null;
      at = slot;
    }
  }
}

/**
 * A cron expression checked by croner: it must parse, in a time zone the runtime knows, and fire at
 * least once. `where` names the flag or field in the message.
 */
export function compileCron(expression: string, tz: string, where: string): Cron {
  validateTimeZone(tz, '--tz');
  let cron: Cron;
  try {
    cron = new (cronLibrary())(expression, { timezone: tz, paused: true });
  } catch (error) {
    const why = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where} "${expression}": ${why} (fields: [second] minute hour day-of-month month day-of-week, e.g. "0 8 * * *" for 08:00 daily; check one with: baton schedule preview --cron "<expr>")`,
    );
  }
  return cron;
}

/** An IANA time zone the runtime knows (Europe/Berlin, Asia/Shanghai, UTC). */
export function validateTimeZone(tz: string, where: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz;
  } catch {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where} "${tz}": unknown time zone; give an IANA name such as UTC, Europe/Berlin or Asia/Shanghai`,
    );
  }
}

/** Refuses a timing whose slots never come (a cron such as "0 0 31 2 *", or an end before the start). */
export function assertFires(rules: Pick<ScheduleRules, 'timing' | 'startAt' | 'endAt'>, now: number): void {
  if (new SlotClock(rules).next(now) !== null) return;
  const what = timingText(rules.timing);
  throw new BatonError(
    'INVALID_ARGUMENT',
    `${what} never fires${rules.endAt !== null ? ' before --end-at' : ''}: check it with baton schedule preview`,
  );
}

/**
 * Refuses a cron expression whose slots come less than MIN_INTERVAL_MS apart: a seconds field of
 * more than one value (`0,30 * * * * *`, or `*` first). Its next slots after `now` are compared, as
 * croner computes them: a seconds field of several values fires them all in each minute it fires, so
 * one of the first two gaps is under a minute. `where` names the flag or field.
 */
export function assertSlotsApart(
  rules: Pick<ScheduleRules, 'timing' | 'startAt' | 'endAt'>,
  now: number,
  where: string,
): void {
  if (!('cron' in rules.timing)) return;
  const slots = new SlotClock(rules).nextSlots(now, 4);
  for (let i = 1; i < slots.length; i++) {
    const gapMs = slots[i]! - slots[i - 1]!;
    if (gapMs >= MIN_INTERVAL_MS) continue;
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where} "${rules.timing.cron}": its slots come ${gapMs / 1000}s apart; a schedule fires at most once a minute (the minimum interval, ${MIN_INTERVAL_MS} ms): give five fields, or a seconds field of one value (e.g. "0 */5 * * * *")`,
    );
  }
}

/** A timing in words: `cron "0 8 * * *" (Asia/Shanghai)` or `every 30s`. */
export function timingText(timing: ScheduleTiming): string {
  if ('cron' in timing) return `cron "${timing.cron}" (${timing.tz})`;
  const ms = timing.everyMs;
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms % size === 0) return `every ${ms / size}${unit}`;
  }
  return `every ${ms}ms`;
}
