/**
 * Limits on the JSON (and YAML) that users hand to Baton: plan files, state.json files, argv
 * arrays, results. Deeply nested input would overflow the call stack of every recursive step
 * after parsing (schema checks, YAML composition, JSON.stringify); duplicate keys would let one
 * value hide another. Both are found in one linear scan of the text, before JSON.parse.
 */

/** Containers (objects, arrays, mappings, sequences) nested deeper than this are refused. */
export const MAX_NESTING_DEPTH = 64;

/** `nesting is deeper than 64 levels (the limit)`. */
export const NESTING_PROBLEM = `nesting is deeper than ${MAX_NESTING_DEPTH} levels (the limit)`;

/** What a scan of JSON text found wrong; offsets are UTF-16 indexes into the text. */
type JsonTextProblem =
  | { kind: 'too-deep'; offset: number }
  | { kind: 'duplicate-key'; key: string; offset: number; firstOffset: number; path: (string | number)[] };

interface Frame {
  /** Keys seen so far with their offsets; null for an array. */
  keys: Map<string, number> | null;
  /** The key (object) or index (array) of the value being read. */
  at: string | number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * One pass over JSON text: the first place nesting goes past `maxDepth`, else the first key
 * repeated within one object. The text is not validated (JSON.parse does that): on malformed
 * text the scan finishes without a verdict or with one that JSON.parse's error will overrule.
 */
export function scanJsonText(text: string, maxDepth = MAX_NESTING_DEPTH): JsonTextProblem | null {
  const stack: Frame[] = [];
  let expectKey = false;
  let duplicate: JsonTextProblem | null = null;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const start = i;
      i = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (expectKey && top?.keys && duplicate === null) {
        const raw = text.slice(start, i + 1);
        const key = raw.includes('\\') ? decodeKey(raw) : raw.slice(1, -1);
        const first = top.keys.get(key);
        if (first !== undefined) {
          const path = [...stack.slice(0, -1).map((frame) => frame.at), key];
          duplicate = { kind: 'duplicate-key', key, offset: start, firstOffset: first, path };
        } else top.keys.set(key, start);
        top.at = key;
      }
      expectKey = false;
    } else if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      if (stack.length >= maxDepth) return { kind: 'too-deep', offset: i };
      const isObject = code === 0x7b;
      stack.push({ keys: isObject ? new Map() : null, at: 0 });
      expectKey = isObject;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
    } else if (code === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.keys) expectKey = true;
      else if (top) top.at = (top.at as number) + 1;
    }
  }
  return duplicate;
}

/** The index of the quote that closes the string opening at `start` (or the text's end). */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  while (end !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return text.length;
}

function decodeKey(raw: string): string {
  try {
    return JSON.parse(raw) as string;
  } catch {
    return raw;
  }
}

/** 1-based line and column of a UTF-16 offset. */
export function linePosition(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++;
    lineStart = at + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * The problem with a scan's verdict, in words: `nesting is deeper than 64 levels (the limit)` or
 * `duplicate key "id" in steps[0] (first at line 3, column 5): a key may appear once per object`.
 */
export function describeJsonTextProblem(problem: JsonTextProblem, text: string): string {
  if (problem.kind === 'too-deep') return NESTING_PROBLEM;
  const first = linePosition(text, problem.firstOffset);
  const where = problem.path.length > 1 ? ` in ${pathText(problem.path.slice(0, -1))}` : '';
  return `duplicate key ${JSON.stringify(problem.key)}${where} (first at line ${first.line}, column ${first.column}): a key may appear once per object`;
}

function pathText(path: readonly (string | number)[]): string {
  return path
    .map((part, index) =>
      typeof part === 'number'
        ? `[${part}]`
        : /^[A-Za-z_$][\w$-]*$/.test(part)
          ? `${index === 0 ? '' : '.'}${part}`
          : `[${JSON.stringify(part)}]`,
    )
    .join('');
}

/**
 * Whether a value (as parsed, or built in code) nests containers deeper than `maxDepth`. Walks
 * with an explicit stack, so it cannot overflow; a value that contains itself is too deep.
 */
export function isNestedTooDeep(value: unknown, maxDepth = MAX_NESTING_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  // Shared parts (a YAML alias, an object used twice in code) are walked again only deeper down.
  const deepestSeen = new Map<object, number>();
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [current, depth] = entry;
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= maxDepth) return true;
    if ((deepestSeen.get(current) ?? -1) >= depth) continue;
    deepestSeen.set(current, depth);
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * JSON.parse after the scan above: the value, or the problem in words with its position. Syntax
 * errors are JSON.parse's (thrown as SyntaxError for the caller to word).
 */
export function parseJsonWithLimits(
  text: string,
): { value: unknown } | { problem: string; line: number; column: number } {
  const found = scanJsonText(text);
  if (found?.kind === 'too-deep') return { problem: NESTING_PROBLEM, ...linePosition(text, found.offset) };
  const value: unknown = JSON.parse(text);
  if (found) return { problem: describeJsonTextProblem(found, text), ...linePosition(text, found.offset) };
  return { value };
}
