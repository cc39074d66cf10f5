import { existsSync, readFileSync, statSync } from 'node:fs';
import { BatonError } from '../core/errors.js';
import { parseJsonWithLimits } from '../core/json-text.js';
import type { StepResult } from '../core/run-state.js';

/** At most this much of a resolved result is kept as its summary (what templates read). */
const SUMMARY_MAX_CHARS = 64_000;

/** A file's content (JSON if it parses, else its text), or the argument itself as JSON. */
export function readResult(argument: string): StepResult {
  if (existsSync(argument) && statSync(argument).isFile())
    return resultOfText(readFileSync(argument, 'utf8'), argument);
  const parsed = parseJson(argument, '--result');
  if (parsed === undefined) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `--result ${argument.slice(0, 80)}: not valid JSON and no such file (quote text as JSON: '"sent"')`,
    );
  }
  return toResult(parsed);
}

/**
 * A result given as text (a file's content, the console's result box): its JSON value if it is
 * JSON, else the text itself. `where` names it in the message about a JSON value too deep.
 */
export function resultOfText(text: string, where: string): StepResult {
  return toResult(parseJson(text, where) ?? { text });
}

/** The JSON value of `text`, or undefined if it is not JSON; too deep or repeated keys are refused. */
function parseJson(text: string, where: string): { value: unknown } | undefined {
  let parsed: ReturnType<typeof parseJsonWithLimits>;
  try {
    parsed = parseJsonWithLimits(text);
  } catch {
    return undefined;
  }
  if ('value' in parsed) return parsed;
  throw new BatonError('INVALID_ARGUMENT', `${where}:${parsed.line}:${parsed.column}: ${parsed.problem}`);
}

function toResult(parsed: { value: unknown } | { text: string }): StepResult {
  if ('text' in parsed) return { summary: parsed.text.slice(0, SUMMARY_MAX_CHARS), outputs: [] };
  const value = parsed.value;
  if (typeof value === 'string') return { summary: value.slice(0, SUMMARY_MAX_CHARS), outputs: [] };
  return { summary: JSON.stringify(value).slice(0, SUMMARY_MAX_CHARS), outputs: [], value };
}
