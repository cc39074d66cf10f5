import { BatonError } from '../errors.js';

/** A duration string: a number and a unit, e.g. `500ms`, `30s`, `1.5m`, `2h`, `1d`. */
export const DURATION_PATTERN = /^\d+(\.\d+)?(ms|s|m|h|d)$/;

export const DURATION_EXAMPLES = '1500, "500ms", "30s", "2m", "1h" or "1d"';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a duration into whole milliseconds: a non-negative integer is taken as milliseconds,
 * a string needs a unit (`ms`, `s`, `m`, `h`, `d`); fractions are rounded to the nearest ms.
 * `where` names the field or option in the error message (e.g. `steps.fetch.timeoutMs`, `--delay`).
 */
export function parseDurationMs(value: string | number, where: string): number {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value >= 0) return value;
    throw invalidDuration(value, where);
  }
  if (typeof value === 'string') {
    const match = DURATION_PATTERN.exec(value);
    const amount = match?.[0].slice(0, match[0].length - (match[2]?.length ?? 0));
    const unitMs = match?.[2] === undefined ? undefined : UNIT_MS[match[2]];
    if (amount !== undefined && unitMs !== undefined) {
      const ms = Math.round(Number(amount) * unitMs);
      if (Number.isSafeInteger(ms)) return ms;
    }
  }
  throw invalidDuration(value, where);
}

/** True when `parseDurationMs` would accept the value. */
export function isDuration(value: unknown): value is string | number {
  if (typeof value !== 'string' && typeof value !== 'number') return false;
  try {
    parseDurationMs(value, '');
    return true;
  } catch {
    return false;
  }
}

function invalidDuration(value: unknown, where: string): BatonError {
  const got = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return new BatonError(
    'INVALID_ARGUMENT',
    `${where}: ${got} is not a duration: use whole milliseconds or a number with a unit (ms, s, m, h, d), e.g. ${DURATION_EXAMPLES}`,
  );
}

/** `ms` as a plan writes it: in the largest unit that holds it whole (600000 is `10m`, 1500 `1500ms`). */
export function durationText(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNIT_MS[unit]!;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
