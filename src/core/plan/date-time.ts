/** An ISO 8601 date-time with an offset (`Z` or `+08:00`): text that means one instant. */
export const DATE_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export const DATE_TIME_EXAMPLE = '2026-12-24T08:00:00+08:00';

/** The instant an ISO 8601 date-time with an offset names, in ms since the epoch; undefined when it is not one. */
export function instantOf(value: unknown): number | undefined {
  if (typeof value !== 'string' || !DATE_TIME_PATTERN.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isFinite(at) ? at : undefined;
}
