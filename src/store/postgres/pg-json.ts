/** An escaped NUL in JSON text: `\u0000` after an even run of backslashes (an odd run escapes the `\` itself). */
const ESCAPED_NUL = /(?<!\\)((?:\\\\)*)\\u0000/g;

/**
 * JSON text for a `json` parameter. PostgreSQL text cannot hold U+0000, so a NUL in any string is
 * stored as U+FFFD (a step's result stays exact: it travels as JSON text, where a NUL is escaped).
 * JSON.stringify writes a NUL as the escape `\u0000`, so the text is only rewritten when it has one.
 */
export function toPgJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes('\\u0000') ? text.replace(ESCAPED_NUL, '$1\\ufffd') : text;
}
