import { BatonError } from '../errors.js';

/**
 * What a schedule does, as stored: when its slots come (a cron expression in a time zone, or a
 * fixed interval), what happens to a slot while the previous run is still going, how far back a
 * tick makes up slots it missed, and the window in which slots exist at all. Times are ms since
 * the epoch.
 */
export interface ScheduleRules {
  timing: ScheduleTiming;
  overlap: OverlapPolicy;
  /** Missed slots this recent start when a tick finds them (oldest first); null: none, only the latest. */
  catchUpMs: number | null;
  /** No slot before this time (null: from when the schedule was added). */
  startAt: number | null;
  /** No slot after this time (null: no end). */
  endAt: number | null;
  /**
   * Its runs are shadow runs (`schedule add --shadow`; true) or live ones (`schedule update --live`;
   * false), whatever the plan says; absent: as the plan says.
   */
  shadow?: boolean;
  /** The labels of its runs (`schedule add -l team=growth`). */
  labels?: Readonly<Record<string, string>>;
  /** The claim priority of its runs, 1 to 9 (`schedule add --priority 5`); absent: the plan's. */
  priority?: number;
}

/** A cron expression (5 fields, or 6 with seconds first) in an IANA time zone, or an interval. */
export type ScheduleTiming = { cron: string; tz: string } | { everyMs: number };

/**
 * skip (the default): a slot whose previous run is still going is recorded as skipped, with the
 * reason. queue: it waits and starts when that run ends (one slot waits at most; later ones are
 * skipped). allow: it starts anyway.
 */
export const OVERLAP_POLICIES = ['skip', 'queue', 'allow'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** The catch-up window when none is given: slots missed in the last hour start when a tick finds them. */
export const DEFAULT_CATCH_UP_MS = 3_600_000;
/** At most this many slots of one schedule start in one tick (the newest; older due slots are recorded as missed). */
export const MAX_CATCH_UP_STARTS = 10;
/**
 * The shortest time between two slots of a schedule: `--every` under it is refused, and so is a cron
 * expression whose slots come closer (a seconds field of more than one value). A schedule starts a
 * run per slot; a minute is also a cron line's own step.
 */
export const MIN_INTERVAL_MS = 60_000;
/**
 * Runs one cycle starts from schedule slots at most: its tick stops before the schedule whose slots
 * would pass it (a schedule's tick is whole), which stays due, and the engine looks again at once.
 * With the store's batch of due schedules per cycle (store/schedules/schedule-look.ts), it keeps one
 * cycle's transaction short, so `--max-time` and signals are heard between cycles.
 */
export const SLOT_RUNS_PER_CYCLE = 100;
/**
 * Runs one `baton check` starts from schedule slots at most. The due slots beyond stay due, decided
 * by the next check (or a worker); the check says it left some.
 */
export const SLOT_RUNS_PER_CHECK = 200;

/** A schedule's name: it starts every run id of the schedule (`<name>-<slot>`), within the run id's 64 characters. */
export const SCHEDULE_NAME_PATTERN = /^[A-Za-z0-9_-]{1,40}$/;

export function validateScheduleName(name: string): string {
  if (!SCHEDULE_NAME_PATTERN.test(name)) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `schedule name "${name}" must match [A-Za-z0-9_-]{1,40} (it starts the id of every run it starts), e.g. daily-report`,
    );
  }
  return name;
}

export function validateOverlap(value: string, where: string): OverlapPolicy {
  if ((OVERLAP_POLICIES as readonly string[]).includes(value)) return value as OverlapPolicy;
  throw new BatonError(
    'INVALID_ARGUMENT',
    `${where}: expected one of ${OVERLAP_POLICIES.join(', ')}, got "${value}"`,
  );
}

export function validateEveryMs(everyMs: number, where: string): number {
  if (!Number.isSafeInteger(everyMs) || everyMs < MIN_INTERVAL_MS) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: a schedule fires at most once a minute (the minimum interval, ${MIN_INTERVAL_MS} ms): give 1m or more (e.g. 5m), got ${everyMs} ms`,
    );
  }
  return everyMs;
}

/** The run id of a schedule's slot: `<name>-<YYYYMMDDTHHMMSSZ>`, the slot in UTC. */
export function slotRunId(name: string, slotAt: number): string {
  return `${name}-${compactUtc(slotAt)}`;
}

/** The run id of `baton schedule trigger`: the time in UTC and `-manual`, apart from every slot's id. */
export function triggerRunId(name: string, at: number): string {
  return `${name}-${compactUtc(at)}-manual`;
}

function compactUtc(at: number): string {
  return new Date(at)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '');
}
