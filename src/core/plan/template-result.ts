import { BatonError } from '../errors.js';

/**
 * `{{steps.<id>.result}}` and `{{steps.<id>.result.<path>}}`: a step's structured result (a result
 * file's JSON, a function's return value) read by a dot path, objects by key and arrays by index
 * (`result.pages.0.url`). Only own properties are read, and nothing is evaluated.
 */

/** One segment of a result path: no whitespace, no dot, no brace. */
const PATH_SEGMENT = /^[^\s.{}]+$/;

/** Whether `path` (after `result`) is a well-formed result path. */
export function isResultPath(path: readonly string[]): boolean {
  return path.every((segment) => PATH_SEGMENT.test(segment));
}

/** A value as text in a prompt: a string as it is, anything else as JSON. */
function valueText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The text a result reference stands for. Without a path: the value, or the summary when the step
 * has no structured value. Throws `PLAN_INVALID` naming `raw` when the path leads nowhere.
 */
export function resultText(
  raw: string,
  stepId: string,
  result: { summary: string; value?: unknown },
  path: readonly string[],
): string {
  if (path.length === 0) return result.value === undefined ? String(result.summary) : valueText(result.value);
  if (result.value === undefined) {
    throw new BatonError(
      'PLAN_INVALID',
      `${raw}: step "${stepId}" has no structured result (only a summary): give it a resultFile, or use {{steps.${stepId}.result}}`,
    );
  }
  let current: unknown = result.value;
  for (const [index, segment] of path.entries()) {
    const next = childOf(current, segment);
    if (next === undefined) {
      const where = index === 0 ? 'its result' : `result.${path.slice(0, index).join('.')}`;
      throw new BatonError(
        'PLAN_INVALID',
        `${raw}: the result of step "${stepId}" has no "${segment}" in ${where} (${describeShape(current)})`,
      );
    }
    current = next;
  }
  return valueText(current);
}

function childOf(value: unknown, segment: string): unknown {
  if (Array.isArray(value)) {
    if (!/^(0|[1-9][0-9]*)$/.test(segment)) return undefined;
    return value[Number(segment)];
  }
  if (typeof value !== 'object' || value === null) return undefined;
  return Object.hasOwn(value, segment) ? (value as Record<string, unknown>)[segment] : undefined;
}

function describeShape(value: unknown): string {
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (value === null) return 'null';
  if (typeof value !== 'object') return `a ${typeof value}`;
  const keys = Object.keys(value);
  if (keys.length === 0) return 'an empty object';
  const shown = keys.length > 20 ? [...keys.slice(0, 20), '...'] : keys;
  return `keys: ${shown.join(', ')}`;
}
