import { checkLabels } from '../core/labels.js';
import { isPriority } from '../core/priority.js';
import '../store/core-libraries.js';
import { BatonError } from '../core/errors.js';
import {
  DEFAULT_CATCH_UP_MS,
  type OverlapPolicy,
  type ScheduleRules,
  validateEveryMs,
  validateOverlap,
} from '../core/schedule/schedule-rules.js';
import { assertFires, assertSlotsApart, compileCron, validateTimeZone } from '../core/schedule/slot-clock.js';
import { parseDurationOption } from './parse-values.js';

/**
 * A schedule's options as the CLI and the TypeScript API take them: `cron` (with `tz`, default
 * UTC) or `every`; durations as text ("30s", "5m") or ms; times as ISO 8601 text or ms.
 */
export interface ScheduleOptions {
  cron?: string;
  tz?: string;
  every?: string | number;
  /** What a slot does while the previous run still goes: skip (default), queue or allow. */
  overlap?: OverlapPolicy | string;
  /** How far back missed slots start when a tick finds them ("none": only the latest; default 1h). */
  catchUp?: string | number;
  startAt?: string | number;
  endAt?: string | number;
  /** Its runs are shadow runs (true) or live ones (false), whatever the plan says; default: as the plan says. */
  shadow?: boolean;
  /** The labels of its runs (checked by core/labels.ts). */
  labels?: Readonly<Record<string, string>>;
  /** The claim priority of its runs, 0 to 9 (core/priority.ts); default: the plan's. */
  priority?: number;
}

/** The names the options go by in messages: the CLI's flags, or the API's fields. */
export interface OptionNames {
  cron: string;
  tz: string;
  every: string;
  overlap: string;
  catchUp: string;
  startAt: string;
  endAt: string;
  priority: string;
}

export const CLI_OPTION_NAMES: OptionNames = {
  cron: '--cron',
  tz: '--tz',
  every: '--every',
  overlap: '--overlap',
  catchUp: '--catch-up',
  startAt: '--start-at',
  endAt: '--end-at',
  priority: '--priority',
};

export const API_OPTION_NAMES: OptionNames = {
  cron: 'cron',
  tz: 'tz',
  every: 'every',
  overlap: 'overlap',
  catchUp: 'catchUp',
  startAt: 'startAt',
  endAt: 'endAt',
  priority: 'priority',
};

/**
 * Checks a schedule's options and returns its rules: bad input throws a BatonError naming the
 * option and the fix, before anything is stored. `now`: a timing that never fires after it is refused.
 * A schedule fires at most once a minute (MIN_INTERVAL_MS): a shorter `every`, or a cron whose slots
 * come closer, is refused. Schedules stored before that rule keep their timing until it is changed.
 */
export function scheduleRules(
  options: ScheduleOptions,
  now: number,
  names = CLI_OPTION_NAMES,
): ScheduleRules {
  const hasCron = options.cron !== undefined;
  const hasEvery = options.every !== undefined;
  if (hasCron === hasEvery) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `give either ${names.cron} "<expr>" (e.g. "0 8 * * *") or ${names.every} <duration> (e.g. 30s), ${hasCron ? 'not both' : 'one of them'}`,
    );
  }
  if (!hasCron && options.tz !== undefined) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${names.tz} goes with ${names.cron}: ${names.every} counts real time`,
    );
  }
  let timing: ScheduleRules['timing'];
  if (hasCron) {
    const tz = validateTimeZone(options.tz ?? 'UTC', names.tz);
    compileCron(options.cron!, tz, names.cron);
    timing = { cron: options.cron!, tz };
  } else timing = { everyMs: validateEveryMs(durationOf(options.every!, names.every), names.every) };
  const rules: ScheduleRules = {
    timing,
    overlap: validateOverlap(options.overlap ?? 'skip', names.overlap),
    catchUpMs:
      options.catchUp === undefined
        ? DEFAULT_CATCH_UP_MS
        : options.catchUp === 'none'
          ? null
          : durationOf(options.catchUp, names.catchUp),
    startAt: options.startAt === undefined ? null : parseTimeOption(options.startAt, names.startAt),
    endAt: options.endAt === undefined ? null : parseTimeOption(options.endAt, names.endAt),
    ...(options.shadow === undefined ? {} : { shadow: options.shadow }),
    ...(options.labels === undefined || Object.keys(options.labels).length === 0
      ? {}
      : { labels: checkLabels(options.labels, 'labels') }),
    ...(options.priority === undefined
      ? {}
      : { priority: schedulePriority(options.priority, names.priority) }),
  };
  if (rules.startAt !== null && rules.endAt !== null && rules.endAt <= rules.startAt) {
    throw new BatonError('INVALID_ARGUMENT', `${names.endAt} must come after ${names.startAt}`);
  }
  assertFires(rules, now);
  assertSlotsApart(rules, now, names.cron);
  return rules;
}

function schedulePriority(value: unknown, where: string): number {
  if (!isPriority(value))
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: expected a priority, a whole number from 0 (default) to 9 (first), got ${JSON.stringify(value)}`,
    );
  return value;
}

function durationOf(value: string | number, where: string): number {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value >= 0) return value;
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: expected a duration such as 30s, 5m or 1h, got ${value}`,
    );
  }
  return parseDurationOption(value, where);
}

/** A time given as ISO 8601 text (2026-12-03T08:00:00+08:00, 2026-12-03, …) or ms since the epoch. */
export function parseTimeOption(value: string | number, where: string): number {
  const ms = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms)) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where} "${value}": expected a time such as 2026-12-03T08:00:00+08:00 or 2026-12-03T00:00:00Z`,
    );
  }
  return ms;
}
