import { existsSync } from 'node:fs';
import { BatonError } from '../core/errors.js';
import { parseJsonWithLimits } from '../core/json-text.js';
import { checkPayloadSize } from '../core/payload-limit.js';
import type { StepResult } from '../core/run-state.js';
import { readPayloadFile } from './payload-file.js';

/** At most this much of a resolved result is kept as its summary (what templates read). */
const SUMMARY_MAX_CHARS = 64_000;

/**
 * The result `--result` gives, as text for resultOfText: a file's content (JSON if it parses, else
 * its text: a regular file within the payload limit, UTF-8, see payload-file.ts), or the argument
 * itself, which must be JSON. `where` names it in resultOfText's messages.
 */
export function readResultArgument(argument: string): { text: string; where: string } {
  if (existsSync(argument))
    return { text: readPayloadFile(argument, `--result ${argument}`), where: argument };
  checkPayloadSize(argument, '--result');
  if (parseJson(argument, '--result') === undefined) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `--result ${argument.slice(0, 80)}: not valid JSON and no such file (quote text as JSON: '"sent"')`,
    );
  }
  return { text: argument, where: '--result' };
}

/**
 * A result given as text (a file's content, the console's result box, MCP's resolve_step): its
 * JSON value if it is JSON, else the text itself; over the payload limit, refused. `where` names it
 * in the messages.
 */
export function resultOfText(text: string, where: string): StepResult {
  checkPayloadSize(text, where);
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
