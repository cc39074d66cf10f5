import { existsSync, readFileSync, statSync } from 'node:fs';
import { BatonError, runNotFound } from '../../core/errors.js';
import { parseJsonWithLimits } from '../../core/json-text.js';
import type { StepResult } from '../../core/run-state.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../home.js';
import { openStore } from '../open-store.js';

/** At most this much of a resolved result is kept as its summary (what templates read). */
const SUMMARY_MAX_CHARS = 64_000;

/**
 * `baton resolve <run> <step> --result <file|json>`: a human says what a blocked step came to
 * (typically an unknown outcome after a crash mid-effect); the step succeeds with that result.
 */
export async function resolveCommand(
  runId: string,
  stepId: string,
  options: GlobalOptions & { result?: string },
): Promise<number> {
  if (options.result === undefined) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      '--result is required: a JSON value, or a file holding one (or text)',
    );
  }
  const result = readResult(options.result);
  const store = await openStore(options, 'read');
  try {
    const run = await store.getRun(runId);
    if (!run) throw runNotFound(runId);
    if (!run.steps.some((step) => step.stepId === stepId)) {
      const known = run.steps.map((step) => step.stepId).join(', ');
      throw new BatonError('STEP_NOT_FOUND', `run ${runId} has no step "${stepId}" (steps: ${known})`);
    }
    const summary = await store.resolveStep(runId, stepId, result, Date.now());
    if (options.json) printJson(summary);
    else {
      const next = summary.status === 'running' ? ' (baton check or baton worker drives it)' : '';
      process.stdout.write(`step ${stepId} resolved; run is ${summary.status}${next}\n`);
    }
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/** A file's content (JSON if it parses, else its text), or the argument itself as JSON. */
function readResult(argument: string): StepResult {
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
