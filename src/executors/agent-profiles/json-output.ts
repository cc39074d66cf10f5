/**
 * Reading what agent CLIs print: JSON lines (claude stream-json, codex --json, opencode), one JSON
 * object that may span many lines (gemini -o json), or plain text. Tolerant by design: output may be
 * cut at the front (only a tail is kept), interleaved with warnings, or not JSON at all.
 */

export type JsonRecord = Record<string, unknown>;

export function asRecord(value: unknown): JsonRecord | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as JsonRecord)
    : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A finite number ≥ 0, or 0. Strings of digits count (some CLIs print numbers as strings). */
export function count(value: unknown): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}

/** An HTTP status (100–599) in a number or a numeric string; undefined otherwise. */
export function httpStatus(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d{3}$/.test(value.trim()) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 100 && n <= 599 ? n : undefined;
}

/** Every line of `text` that is a JSON object, in order; other lines are skipped. */
export function jsonLines(text: string): JsonRecord[] {
  const records: JsonRecord[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('{') || !trimmed.endsWith('}')) continue;
    const record = parseObject(trimmed);
    if (record) records.push(record);
  }
  return records;
}

/** How many candidate starts `lastJsonObject` tries before it gives up (bounded work on any output). */
const MAX_OBJECT_STARTS = 64;

/**
 * The last JSON object in `text`, which may be pretty-printed over many lines and followed only by
 * whitespace: tried from each line that opens with `{` at its first column, last first.
 */
export function lastJsonObject(text: string): JsonRecord | undefined {
  const trimmed = text.trimEnd();
  if (!trimmed.endsWith('}')) return undefined;
  let end = trimmed.length;
  for (let tries = 0; tries < MAX_OBJECT_STARTS && end > 0; tries++) {
    const newline = trimmed.lastIndexOf('\n{', end - 1);
    const start = newline === -1 ? (trimmed.startsWith('{') ? 0 : -1) : newline + 1;
    if (start === -1) return undefined;
    const record = parseObject(trimmed.slice(start));
    if (record) return record;
    if (start === 0) return undefined;
    end = start - 1;
  }
  return undefined;
}

function parseObject(text: string): JsonRecord | undefined {
  try {
    return asRecord(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * A provider's message as CLIs often pass it on: the raw error body (`{"error":{"message":…}}`)
 * inside a string. Returns the innermost `message`, else the text itself.
 */
export function innerMessage(text: string): string {
  let current = text.trim();
  for (let depth = 0; depth < 3 && (current.startsWith('{') || current.startsWith('[')); depth++) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(current);
    } catch {
      break;
    }
    // Google's streaming errors come as an array of one error object.
    const record = asRecord(Array.isArray(parsed) ? parsed[0] : parsed);
    const error = asRecord(record?.error) ?? record;
    const message = asString(error?.message);
    if (message === undefined) break;
    current = message.trim();
  }
  return current;
}

/** The last `maxChars` of non-empty lines of `text`, whole lines where they fit. */
export function lastLines(text: string, maxChars = 500): string {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim().length > 0);
  let out = '';
  for (let i = lines.length - 1; i >= 0; i--) {
    const next = out.length === 0 ? lines[i]! : `${lines[i]}\n${out}`;
    if (next.length > maxChars) break;
    out = next;
  }
  if (out.length === 0 && lines.length > 0) out = lines[lines.length - 1]!.slice(-maxChars);
  return out;
}
