/**
 * `src/core` is pure: it reads no clock, no random source and no process state, and imports no
 * Node module; the caller passes `now`, `random` and the environment in. This walks every file's
 * syntax tree (so comments, strings and a tuple label such as `[node: number]` do not count) and
 * lists each use with its file, line and column. The lint rule in biome.json keeps I/O packages
 * (better-sqlite3, pg, model SDKs) out of the same folder.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/cli.js';

const coreDir = join(repoRoot, 'src', 'core');

/** Object members that read the clock or a random source, by object. */
const IMPURE_MEMBERS: Record<string, readonly string[] | 'any'> = {
  Date: ['now'],
  Math: ['random'],
  performance: 'any',
  process: 'any',
  crypto: 'any',
};
/** Globals whose mere call does I/O or schedules work. */
const IMPURE_CALLS = ['Date', 'setTimeout', 'setInterval', 'setImmediate', 'fetch', 'require'];

/** Every impure use in a source text, as `line:col: what`. */
function impureUses(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node, what: string) => {
    const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source));
    found.push(`${line + 1}:${character + 1}: ${what}`);
  };
  const checkSpecifier = (node: ts.Node, specifier: ts.Node | undefined) => {
    if (specifier && ts.isStringLiteralLike(specifier) && specifier.text.startsWith('node:')) {
      report(node, `imports ${specifier.text}`);
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      checkSpecifier(node, node.moduleSpecifier);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      checkSpecifier(node, node.argument.literal);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      checkSpecifier(node, node.arguments[0]);
    } else if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const members = IMPURE_MEMBERS[node.expression.text];
      if (members === 'any' || members?.includes(node.name.text)) {
        report(node, `${node.expression.text}.${node.name.text}`);
      }
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression)) {
      if (node.expression.text === 'Date' && (node.arguments?.length ?? 0) === 0) report(node, 'new Date()');
    } else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
      if (IMPURE_CALLS.includes(node.expression.text)) report(node, `${node.expression.text}()`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function coreFiles(): string[] {
  return readdirSync(coreDir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(coreDir, name))
    .sort();
}

describe('src/core purity', () => {
  it('finds every impure form it looks for, and not the same words in comments, strings or labels', () => {
    const sample = [
      "import { readFileSync } from 'node:fs';",
      "export { join } from 'node:path';",
      "type M = typeof import('node:module');",
      "const os = await import('node:os');",
      'const a = Date.now();',
      'const b = new Date();',
      'const c = new Date;',
      'const d = Math.random();',
      'const e = performance.now();',
      'const f = process.env.HOME;',
      'const g = process.cwd();',
      'const h = process.hrtime.bigint();',
      'const i = Date();',
      'setTimeout(() => {}, 1);',
      'const j = crypto.randomUUID();',
      // Pure: a given time, a label, and the same words in a comment and a string.
      'const k = new Date(0); const l = Math.floor(1.5);',
      'const frames: [node: number, next: number][] = [];',
      "// Date.now() and Math.random() and process.env, import 'node:fs'",
      "const m = 'Date.now() new Date() process.env node:fs';",
    ].join('\n');
    expect(impureUses('sample.ts', sample)).toEqual([
      '1:1: imports node:fs',
      '2:1: imports node:path',
      '3:10: imports node:module',
      '4:18: imports node:os',
      '5:11: Date.now',
      '6:11: new Date()',
      '7:11: new Date()',
      '8:11: Math.random',
      '9:11: performance.now',
      '10:11: process.env',
      '11:11: process.cwd',
      '12:11: process.hrtime',
      '13:11: Date()',
      '14:1: setTimeout()',
      '15:11: crypto.randomUUID',
    ]);
  });

  it('src/core reads no clock, random source or process state and imports no node: module', () => {
    const files = coreFiles();
    expect(files.length).toBeGreaterThan(20);
    const uses = files.flatMap((file) =>
      impureUses(file, readFileSync(file, 'utf8')).map((use) => `src/core/${relative(coreDir, file)}:${use}`),
    );
    expect(uses, 'pass the value in from the caller (see `now` in src/core/transitions.ts)').toEqual([]);
  });
});
