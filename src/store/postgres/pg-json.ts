/**
 * JSON text for a `json` parameter. PostgreSQL text cannot hold U+0000, so a NUL in any string is
 * stored as U+FFFD (a step's result stays exact: it travels as JSON text, where a NUL is escaped).
 */
export function toPgJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'string' && v.includes('\u0000') ? v.replaceAll('\u0000', '\uFFFD') : v,
  );
}
