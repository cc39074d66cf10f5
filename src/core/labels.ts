import { firstControlCharacter } from './control-chars.js';
import { BatonError } from './errors.js';

/**
 * Run labels (`-l team=growth`): what a run is for, to find and act on runs by it (`baton status
 * --label`, `retry --blocked --label`). Never metric labels: their values are unbounded.
 */

/** At most this many labels per run. */
export const MAX_LABELS = 32;
const KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$/;
const MAX_VALUE = 200;

/** Why a label is refused, or null. */
function labelProblem(key: string, value: string): string | null {
  if (!KEY.test(key))
    return `label key "${key.slice(0, 80)}" must be 1 to 63 letters, digits, ".", "_", "/" or "-", starting with a letter or digit`;
  if (value.length > MAX_VALUE) return `label ${key}: its value is longer than ${MAX_VALUE} characters`;
  const control = firstControlCharacter(value);
  if (control !== undefined) return `label ${key}: its value holds a control character (${control})`;
  return null;
}

/** `key=value` as typed after `-l`, checked; `where` names the flag. */
export function parseLabel(text: string, where: string): [string, string] {
  const at = text.indexOf('=');
  if (at <= 0)
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: expected key=value (e.g. team=growth), got "${text.slice(0, 80)}"`,
    );
  const key = text.slice(0, at);
  const value = text.slice(at + 1);
  const problem = labelProblem(key, value);
  if (problem) throw new BatonError('INVALID_ARGUMENT', `${where}: ${problem}`);
  return [key, value];
}

/** Labels as typed (`-l a=1 -l b=2`), checked; a key given twice keeps its last value. */
export function parseLabels(texts: readonly string[] | undefined, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const text of texts ?? []) {
    const [key, value] = parseLabel(text, where);
    labels[key] = value;
  }
  return checkLabels(labels, where);
}

/** Labels given as an object (the API, MCP), checked: keys, values, at most MAX_LABELS. */
export function checkLabels(
  labels: Record<string, unknown> | undefined,
  where: string,
): Record<string, string> {
  if (labels === undefined) return {};
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels))
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: expected an object of labels, e.g. {"team": "growth"}`,
    );
  const entries = Object.entries(labels);
  if (entries.length > MAX_LABELS)
    throw new BatonError('INVALID_ARGUMENT', `${where}: ${entries.length} labels, at most ${MAX_LABELS}`);
  for (const [key, value] of entries) {
    if (typeof value !== 'string')
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${where}: label ${key.slice(0, 80)}: expected a string value`,
      );
    const problem = labelProblem(key, value);
    if (problem) throw new BatonError('INVALID_ARGUMENT', `${where}: ${problem}`);
  }
  return labels as Record<string, string>;
}

/** `team=growth,env=prod`, as status prints labels. */
export function labelsText(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}
