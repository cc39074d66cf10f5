import { describeJsonTextProblem, linePosition, NESTING_PROBLEM, scanJsonText } from '../json-text.js';
import { isPlanDocument, PlanInvalidError } from './issues.js';
import { normalizePlan } from './normalize.js';
import { planFileSchema } from './schema.js';
import type { Plan } from './types.js';
import { planErrorMap, planIssuesFromZod } from './zod-issues.js';

/**
 * Parses the text of a JSON plan file. `fileName` is only used in messages. Throws
 * `PlanInvalidError` (code `PLAN_INVALID`) with every problem found, syntax errors as
 * `<file>:<line>:<col>: <message>`. YAML plans (and the choice by file name) are in
 * plan-text.ts, given the YAML parser by src/workflow/parse-plan-text.ts, which alone loads
 * it: a JSON plan does not pay for it.
 */
export function parsePlanJsonText(text: string, fileName: string): Plan {
  const source = text.replace(/^\uFEFF/, '');
  if (source.trim() === '') throw emptyPlan(fileName);
  return validatePlanObject(parseJson(source, fileName), fileName);
}

/** Validates and normalizes a plan given as a value, e.g. one built in code. */
export function validatePlanObject(value: unknown, fileName: string): Plan {
  const result = planFileSchema.safeParse(value, { error: planErrorMap });
  if (!result.success)
    throw new PlanInvalidError(fileName, planIssuesFromZod(result.error.issues, value), {
      planDocument: isPlanDocument(value),
    });
  return normalizePlan(result.data, fileName);
}

function parseJson(text: string, fileName: string): unknown {
  // Depth first: it is found before JSON.parse builds anything; a repeated key only once the text parses.
  const found = scanJsonText(text);
  const issueAt = (offset: number, problem: string) =>
    new PlanInvalidError(fileName, [{ path: '', ...linePosition(text, offset), problem }]);
  if (found?.kind === 'too-deep') throw issueAt(found.offset, NESTING_PROBLEM);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const offset = jsonErrorOffset(text, message);
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - before.lastIndexOf('\n');
    const problem = message
      .replace(/ in JSON at position \d+.*$/, '')
      .replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, '');
    throw new PlanInvalidError(fileName, [{ path: '', line, column, problem }], { cause: error });
  }
  if (found) throw issueAt(found.offset, describeJsonTextProblem(found, text));
  return value;
}

/**
 * Where JSON.parse failed. V8 names the position in most messages, but not in
 * "Unexpected token 'x', ... is not valid JSON" (Node 20): then the shortest prefix that fails
 * for a reason other than ending early ends just after the offending character.
 */
function jsonErrorOffset(text: string, message: string): number {
  const position = /at position (\d+)/.exec(message)?.[1];
  if (position !== undefined) return Number(position);
  if (!/^Unexpected token/.test(message)) return text.length;
  const failsWithin = (length: number): boolean => {
    try {
      JSON.parse(text.slice(0, length));
      return false;
    } catch (error) {
      const prefixMessage = error instanceof Error ? error.message : '';
      const at = /at position (\d+)/.exec(prefixMessage)?.[1];
      return !/end of JSON input/.test(prefixMessage) && (at === undefined || Number(at) < length);
    }
  };
  let low = 1;
  let high = text.length;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (failsWithin(middle)) high = middle;
    else low = middle + 1;
  }
  return low - 1;
}

export function emptyPlan(fileName: string): PlanInvalidError {
  return new PlanInvalidError(fileName, [
    { path: '', problem: 'the plan is empty: it needs at least a "name" and a list of "steps"' },
  ]);
}
