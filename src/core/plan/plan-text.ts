import type { CST, Document, LineCounter } from 'yaml';
import { isNestedTooDeep, MAX_NESTING_DEPTH, NESTING_PROBLEM } from '../json-text.js';
import { PlanInvalidError, type PlanIssue } from './issues.js';
import { emptyPlan, parsePlanJsonText, validatePlanObject } from './parse.js';
import type { Plan } from './types.js';

/** The `yaml` package's exports. */
export type YamlModule = typeof import('yaml');

/**
 * Parses the text of a plan file: JSON when the file name ends in `.json`, YAML otherwise.
 * `fileName` is only used in messages. `loadYaml` returns the YAML parser and is called only for
 * a YAML plan: the caller loads it lazily (src/workflow/parse-plan-text.ts), so a JSON plan never
 * pays for it. Throws `PlanInvalidError` (code `PLAN_INVALID`) with every problem found, syntax
 * errors as `<file>:<line>:<col>: <message>`.
 */
export function parsePlanTextWith(text: string, fileName: string, loadYaml: () => YamlModule): Plan {
  if (/\.json$/i.test(fileName)) return parsePlanJsonText(text, fileName);
  const source = text.replace(/^\uFEFF/, '');
  if (source.trim() === '') throw emptyPlan(fileName);
  const value = parseYaml(source, fileName, loadYaml());
  // The schema walks the value recursively. The text's nesting is checked as it is read, but a
  // chain of YAML aliases nests deeper than the text: check the value too.
  if (isNestedTooDeep(value)) {
    throw new PlanInvalidError(fileName, [{ path: '', problem: NESTING_PROBLEM }]);
  }
  return validatePlanObject(value, fileName);
}

function parseYaml(text: string, fileName: string, yaml: YamlModule): unknown {
  const { Composer, LineCounter } = yaml;
  const lineCounter = new LineCounter();
  const tokens = yamlTokens(text, lineCounter, fileName, yaml);
  // YAML 1.2 core schema: `yes`/`on` stay strings. Merge keys (`<<: *anchor`) are allowed. Tags
  // beyond the core schema's (`!!binary`, `!!set`, `!!timestamp`, which the parser would otherwise
  // resolve) are left unresolved, and refused below.
  const composer = new Composer({
    prettyErrors: false,
    merge: true,
    uniqueKeys: true,
    resolveKnownTags: false,
  });
  const docs: Document.Parsed[] = [...composer.compose(tokens, true, text.length)];
  const doc = docs[0];
  if (doc === undefined) throw emptyPlan(fileName);
  const issueAt = (offset: number, problem: string): PlanIssue => {
    const { line, col } = lineCounter.linePos(offset);
    return { path: '', line, column: col, problem };
  };
  const issues = doc.errors.map((error) => issueAt(error.pos[0], error.message));
  for (const warning of doc.warnings) {
    // The parser reads an unknown tag's value as plain text and only warns: a plan written for
    // another loader (`!!js/function`, `!!python/object`) would run with a meaning it did not have.
    if (warning.code === 'TAG_RESOLVE_FAILED') {
      issues.push(issueAt(warning.pos[0], unknownTagProblem(text, warning.pos[0])));
    }
  }
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
function yamlTokens(text: string, lineCounter: LineCounter, fileName: string, yaml: YamlModule): CST.Token[] {
  const { Lexer, Parser } = yaml;
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

/** The core schema's tags: a plan may write them, e.g. `!!str 1.0` for a string. */
const CORE_TAGS = new Set(['!!str', '!!int', '!!float', '!!bool', '!!null', '!!seq', '!!map']);

/** The problem with the tag written at `offset` of `text`, which the parser could not resolve. */
function unknownTagProblem(text: string, offset: number): string {
  const tag = /^!<[^>]*>|^![^\s,[\]{}]*/.exec(text.slice(offset, offset + 200))?.[0] ?? 'here';
  if (CORE_TAGS.has(tag))
    return `tag ${tag} does not fit this value; remove it (write the value as plain text)`;
  return `tag ${tag} is not part of the plan format; remove it (write the value as plain text)`;
}
