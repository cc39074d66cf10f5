import { Composer, type CST, type Document, Lexer, LineCounter, Parser } from 'yaml';
import {
  describeJsonTextProblem,
  isNestedTooDeep,
  linePosition,
  MAX_NESTING_DEPTH,
  NESTING_PROBLEM,
  scanJsonText,
} from '../json-text.js';
import { PlanInvalidError, type PlanIssue } from './issues.js';
import { normalizePlan } from './normalize.js';
import { planFileSchema } from './schema.js';
import type { Plan } from './types.js';
import { planErrorMap, planIssuesFromZod } from './zod-issues.js';

/**
 * Parses the text of a plan file: JSON when the file name ends in `.json`, YAML otherwise.
 * `fileName` is only used in messages. Throws `PlanInvalidError` (code `PLAN_INVALID`) with
 * every problem found, syntax errors as `<file>:<line>:<col>: <message>`.
 */
export function parsePlanText(text: string, fileName: string): Plan {
  const source = text.replace(/^\uFEFF/, '');
  if (source.trim() === '') throw emptyPlan(fileName);
  const isJson = /\.json$/i.test(fileName);
  const value = isJson ? parseJson(source, fileName) : parseYaml(source, fileName);
  // The schema walks the value recursively. The text's nesting is checked as it is read, but a
  // chain of YAML aliases nests deeper than the text: check a YAML value too.
  if (!isJson && isNestedTooDeep(value)) {
    throw new PlanInvalidError(fileName, [{ path: '', problem: NESTING_PROBLEM }]);
  }
  return validatePlanObject(value, fileName);
}

/** Validates and normalizes a plan given as a value, e.g. one built in code. */
export function validatePlanObject(value: unknown, fileName: string): Plan {
  const result = planFileSchema.safeParse(value, { error: planErrorMap });
  if (!result.success) throw new PlanInvalidError(fileName, planIssuesFromZod(result.error.issues, value));
  return normalizePlan(result.data, fileName);
}

function parseYaml(text: string, fileName: string): unknown {
  const lineCounter = new LineCounter();
  const tokens = yamlTokens(text, lineCounter, fileName);
  // YAML 1.2 core schema: `yes`/`on` stay strings. Merge keys (`<<: *anchor`) are allowed.
  const composer = new Composer({ prettyErrors: false, merge: true, uniqueKeys: true });
  const docs: Document.Parsed[] = [...composer.compose(tokens, true, text.length)];
  const doc = docs[0];
  if (doc === undefined) throw emptyPlan(fileName);
  const issueAt = (offset: number, problem: string): PlanIssue => {
    const { line, col } = lineCounter.linePos(offset);
    return { path: '', line, column: col, problem };
  };
  const issues = doc.errors.map((error) => issueAt(error.pos[0], error.message));
  const second = docs[1];
  if (second !== undefined) {
    issues.push(issueAt(second.range[0], 'Source contains multiple documents: a plan file holds one'));
  }
  if (issues.length > 0) throw new PlanInvalidError(fileName, issues);
  if (doc.contents === null) throw emptyPlan(fileName);
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    const problem = error instanceof Error ? error.message : String(error);
    throw new PlanInvalidError(fileName, [{ path: '', problem }], { cause: error });
  }
}

/**
 * The YAML parser's tokens, refused as soon as its stack (a document, then one entry per open
 * mapping, sequence or scalar) shows nesting past the limit: composing deeper tokens recurses.
 * The stack is at most two entries longer than the nesting, so nothing within the limit is refused.
 */
function yamlTokens(text: string, lineCounter: LineCounter, fileName: string): CST.Token[] {
  const parser = new Parser(lineCounter.addNewLine);
  lineCounter.addNewLine(0);
  const tokens: CST.Token[] = [];
  for (const lexeme of new Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) tokens.push(token);
    if (parser.stack.length > MAX_NESTING_DEPTH + 2) {
      const { line, col } = lineCounter.linePos(parser.offset);
      throw new PlanInvalidError(fileName, [{ path: '', line, column: col, problem: NESTING_PROBLEM }]);
    }
  }
  for (const token of parser.end()) tokens.push(token);
  return tokens;
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

function emptyPlan(fileName: string): PlanInvalidError {
  return new PlanInvalidError(fileName, [
    { path: '', problem: 'the plan is empty: it needs at least a "name" and a list of "steps"' },
  ]);
}
