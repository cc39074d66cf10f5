import { BatonError } from '../core/errors.js';
import { parseDurationMs } from '../core/plan/duration.js';

/** A whole number from 1 to `max` given as text (a flag, a variable, a form field); `where` names it. */
export function parsePositiveInt(value: string, where: string, max = 100_000): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: expected a whole number from 1 to ${max}, got "${value}"`,
    );
  }
  return Number(value);
}

/** A duration given as text: plain digits are milliseconds, or a number with a unit (500ms, 30s, 2m, 1h, 1d). */
export function parseDurationOption(value: string, where: string): number {
  return /^\d+$/.test(value) ? Number(value) : parseDurationMs(value, where);
}
