import { createRequire } from 'node:module';
import type { CST, Document, LineCounter } from 'yaml';
import { isNestedTooDeep, MAX_NESTING_DEPTH, NESTING_PROBLEM } from '../json-text.js';
import { PlanInvalidError, type PlanIssue } from './issues.js';
import { emptyPlan, parsePlanJsonText, validatePlanObject } from './parse.js';
import type { Plan } from './types.js';

type YamlModule = typeof import('yaml');
let yamlModule: YamlModule | undefined;

/**
 * The YAML parser, loaded by the first YAML plan (about 10 MB and 50 ms of a process's start):
 * JSON plans and plans built in code never load it.
 */
const yaml = (): YamlModule => {
  yamlModule ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return yamlModule;
};

/**
 * Parses the text of a plan file: JSON when the file name ends in `.json`, YAML otherwise.
 * `fileName` is only used in messages. Throws `PlanInvalidError` (code `PLAN_INVALID`) with
 * every problem found, syntax errors as `<file>:<line>:<col>: <message>`.
 */
export function parsePlanText(text: string, fileName: string): Plan {
  if (/\.json$/i.test(fileName)) return parsePlanJsonText(text, fileName);
  const source = text.replace(/^\uFEFF/, '');
  if (source.trim() === '') throw emptyPlan(fileName);
  const value = parseYaml(source, fileName);
  // The schema walks the value recursively. The text's nesting is checked as it is read, but a
  // chain of YAML aliases nests deeper than the text: check the value too.
  if (isNestedTooDeep(value)) {
    throw new PlanInvalidError(fileName, [{ path: '', problem: NESTING_PROBLEM }]);
  }
  return validatePlanObject(value, fileName);
}

function parseYaml(text: string, fileName: string): unknown {
  const { Composer, LineCounter } = yaml();
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
  const { Lexer, Parser } = yaml();
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
