import { createRequire } from 'node:module';
import type { Ajv } from 'ajv';
import type { RE2JS } from 're2js';

/**
 * How Baton builds its one kind of JSON Schema checker (ajv, draft-07, `format` not checked), for a
 * step's `resultSchema`, a wait's `schema` and a model tool's parameters: every schema it checks
 * can meet a value from outside (an agent's result file, an event payload through a capability URL,
 * a model's tool call), so no check may take more than linear time in the value's size:
 * - `pattern` and `patternProperties` run in RE2JS, a linear-time regular expression engine (no
 *   backtracking), never JavaScript's RegExp. Patterns RE2 has no linear form for (backreferences,
 *   lookaround) are refused when the schema is compiled, as is a pattern whose compiled program is
 *   larger than PATTERN_MAX_PROGRAM (the time of a match is the text's length times that size).
 * - `uniqueItems` compares every pair of items unless they are scalars: it needs `maxItems` of at
 *   most UNIQUE_ITEMS_MAX_ITEMS or scalar `items`, or the schema is refused (`uniqueItemsProblem`).
 * Loaded by the first schema met (ajv costs about 10 MB and 60 ms): plans without one never load it.
 */

/** The largest compiled pattern a schema may hold, in RE2 program instructions. */
export const PATTERN_MAX_PROGRAM = 1_000;

/** The most items an array under `uniqueItems` of objects or lists may be allowed by `maxItems`. */
export const UNIQUE_ITEMS_MAX_ITEMS = 1_000;

const require = createRequire(import.meta.url);
let re2: typeof RE2JS | undefined;

/** A pattern compiled to run in linear time, in the shape ajv's `code.regExp` asks for. */
export function linearRegExp(
  pattern: string,
  flags = '',
): { test(text: string): boolean; toString(): string } {
  re2 ??= (require('re2js') as typeof import('re2js')).RE2JS;
  const engine = re2;
  let compiled: RE2JS;
  try {
    // ajv hands over ECMAScript syntax: translate what differs (\d, named groups) to RE2's.
    const flagBits = flags.includes('i') ? engine.CASE_INSENSITIVE : 0;
    compiled = engine.compile(engine.translateRegExp(pattern), flagBits);
  } catch (error) {
    throw new Error(
      `pattern ${JSON.stringify(pattern)} is not a linear-time regular expression (${(error as Error).message}): Baton runs patterns in RE2, without backreferences or lookaround`,
    );
  }
  const size = compiled.programSize();
  if (size > PATTERN_MAX_PROGRAM)
    throw new Error(
      `pattern ${JSON.stringify(pattern.slice(0, 80))} compiles to ${size} instructions, more than the ${PATTERN_MAX_PROGRAM} a pattern may have (the limit of a pattern's size): simplify it`,
    );
  // ajv keys its compiled patterns by toString(): two patterns must never share one.
  const key = `/${pattern}/${flags}`;
  return { test: (text) => compiled.test(text), toString: () => key };
}
// What ajv would write for this engine in standalone code (Baton never generates any).
linearRegExp.code = 'linearRegExp';

/** A new ajv with Baton's options: every error, unknown keywords ignored, no logging, linear patterns. */
export function newSchemaChecker(): Ajv {
  const { Ajv: AjvClass } = require('ajv') as typeof import('ajv');
  return new AjvClass({
    allErrors: true,
    strict: false,
    logger: false,
    code: { regExp: linearRegExp },
  });
}

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/**
 * Where a schema allows `uniqueItems` over arrays that ajv would compare pair by pair (items that
 * are not declared scalars, and no `maxItems` of at most UNIQUE_ITEMS_MAX_ITEMS): the JSON pointer
 * of the first such place, with the fix, or undefined.
 */
export function uniqueItemsProblem(schema: unknown, at = ''): string | undefined {
  if (Array.isArray(schema)) {
    for (const [index, item] of schema.entries()) {
      const problem = uniqueItemsProblem(item, `${at}/${index}`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (schema === null || typeof schema !== 'object') return undefined;
  const node = schema as Record<string, unknown>;
  if (node.uniqueItems === true && !boundedPairs(node)) {
    return `${at || '/'}: uniqueItems over items that are not declared scalars needs maxItems of at most ${UNIQUE_ITEMS_MAX_ITEMS} (the limit of uniqueItems): ajv compares every pair of them; add "maxItems", or "items": {"type": "string"} (or another scalar type)`;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') continue;
    const problem = uniqueItemsProblem(value, `${at}/${key}`);
    if (problem) return problem;
  }
  return undefined;
}

function boundedPairs(node: Record<string, unknown>): boolean {
  if (typeof node.maxItems === 'number' && node.maxItems <= UNIQUE_ITEMS_MAX_ITEMS) return true;
  const items = node.items as { type?: unknown } | undefined;
  const types = Array.isArray(items?.type) ? items.type : [items?.type];
  return items !== undefined && types.every((type) => typeof type === 'string' && SCALAR_TYPES.has(type));
}
