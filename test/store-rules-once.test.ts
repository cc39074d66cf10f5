/**
 * Each rule of the store is written once (CONVENTIONS.md, "A rule in one place, SQL included"):
 * when a lease ran out, when a cancelled attempt still takes its flow slot, when a hook call is
 * due, when a schedule has a slot to decide, which steps are due, which wait steps move, which runs
 * have not ended, that a paused schedule has no next slot; and the send-event loop and the schedule
 * tick are orchestrated once for both dialects. This walks every source file's syntax tree (so
 * comments do not count) and lists each restatement outside the rule's home with its file and line.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { isDueStep, leaseExpired, type StepStatus } from '../src/core/run-state.js';
import { dueStepSql } from '../src/store/due-steps.js';
import { hookCallDueSql } from '../src/store/hook-calls-due.js';
import { leaseExpiredSql } from '../src/store/lease-rules.js';
import { SQLITE_INDEXES } from '../src/store/schema-tables.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { repoRoot } from './helpers/cli.js';

const srcDir = join(repoRoot, 'src');

interface Found {
  file: string;
  line: number;
  text: string;
}

/** Every source file's SQL text (string and template literals, `${…}` for a substitution) and code. */
let parsed: { file: string; source: ts.SourceFile }[] | undefined;
function sources(): { file: string; source: ts.SourceFile }[] {
  parsed ??= (readdirSync(srcDir, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({
      file: relative(srcDir, join(srcDir, file)),
      source: ts.createSourceFile(
        file,
        readFileSync(join(srcDir, file), 'utf8'),
        ts.ScriptTarget.Latest,
        true,
      ),
    }));
  return parsed;
}

function literalText(node: ts.Node): string | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node))
    return node.head.text + node.templateSpans.map((span) => `\${…}${span.literal.text}`).join('');
  return null;
}

/** Where a literal matches `pattern`, or a node satisfies `code`, in every source file. */
function findAll(match: { sql?: RegExp; code?: (node: ts.Node) => boolean }): Found[] {
  const found: Found[] = [];
  for (const { file, source } of sources()) {
    const visit = (node: ts.Node): void => {
      const text = literalText(node);
      const hit = text !== null ? match.sql?.test(text) : match.code?.(node);
      if (hit) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
        found.push({ file, line: line + 1, text: node.getText(source).slice(0, 80) });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

const callOf =
  (name: string) =>
  (node: ts.Node): boolean =>
    ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === name;

/** Each rule: how a restatement looks, and the one file allowed to state it. */
const RULES: { rule: string; sql?: RegExp; code?: (node: ts.Node) => boolean; home: string[] }[] = [
  {
    rule: 'the lease ran out (SQL)',
    sql: /(?:(?<![\w.])|\bs\.)lease_expires_at\s*<=/,
    home: ['store/lease-rules.ts'],
  },
  {
    rule: 'the lease ran out (in memory)',
    code: (node) =>
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.LessThanEqualsToken &&
      /leaseExpiresAt!?$/.test(node.left.getText()),
    home: ['core/run-state.ts'],
  },
  {
    rule: 'a cancelled attempt still takes its flow slot',
    sql: /'cancelled' AND [\w.]*lease_expires_at/,
    home: ['store/lease-rules.ts'],
  },
  {
    rule: 'a hook call is due',
    sql: /state = 'pending' AND [\w.]*due_at/,
    home: ['store/hook-calls-due.ts'],
  },
  { rule: "a schedule's slot has come", sql: /next_fire_at\s*<=/, home: ['store/schedules/slots-due.ts'] },
  {
    rule: 'a queued slot is free',
    sql: /queued_slot_at IS NOT NULL AND/,
    home: ['store/schedules/slots-due.ts'],
  },
  { rule: 'a step is due (SQL)', sql: /(?:(?<![\w.])|\bs\.)due_at\s*<=/, home: ['store/due-steps.ts'] },
  { rule: 'a wait step moves when due', sql: /flow_key = '/, home: ['store/due-waits.ts'] },
  {
    rule: 'a run has not ended',
    sql: /'awaiting_approval',\s*'running'|NOT IN \('succeeded'/,
    home: [],
  },
  {
    rule: 'a paused schedule has no next slot',
    code: (node) =>
      ts.isConditionalExpression(node) &&
      /paused\)?$/.test(node.condition.getText()) &&
      node.whenTrue.kind === ts.SyntaxKind.NullKeyword,
    home: ['store/schedules/schedule-rows.ts'],
  },
  { rule: 'the send-event loop', code: callOf('eventForRun'), home: ['store/cycle/send-event.ts'] },
  {
    rule: "the schedule tick's decisions",
    code: callOf('decideTick'),
    home: ['store/cycle/schedule-tick.ts'],
  },
  { rule: "the schedule tick's result", code: callOf('afterTick'), home: ['store/cycle/schedule-tick.ts'] },
];

describe('each rule of the store, once', () => {
  for (const { rule, home, ...match } of RULES) {
    it(`${rule}: only in ${home.join(', ') || 'what derives it'}`, () => {
      const outside = findAll(match).filter((found) => !home.includes(found.file));
      expect(outside.map((found) => `${found.file}:${found.line}: ${found.text}`)).toEqual([]);
    });
  }

  it('the SQL and the in-memory rules agree: a lease that ran out, a due step', () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE steps (status TEXT, due_at INTEGER, lease_expires_at INTEGER)');
      const insert = db.prepare('INSERT INTO steps VALUES (?, ?, ?)');
      const statuses: StepStatus[] = [
        'pending',
        'ready',
        'retry_wait',
        'waiting',
        'running',
        'blocked',
        'cancelled',
      ];
      const times = [null, 99, 100, 101];
      for (const status of statuses)
        for (const at of times) for (const lease of times) insert.run(status, at, lease);
      const rows = db
        .prepare(
          `SELECT status, due_at AS dueAt, lease_expires_at AS leaseExpiresAt,
             coalesce(${leaseExpiredSql('@now')}, 0) AS expired, coalesce(${dueStepSql('@now')}, 0) AS due
           FROM steps s`,
        )
        .all({ now: 100 }) as {
        status: StepStatus;
        dueAt: number | null;
        leaseExpiresAt: number | null;
        expired: number;
        due: number;
      }[];
      expect(rows.length).toBe(statuses.length * times.length ** 2);
      for (const row of rows) {
        expect(row.expired === 1, JSON.stringify(row)).toBe(leaseExpired(row, 100));
        expect(row.due === 1, JSON.stringify(row)).toBe(isDueStep(row, 100));
      }
      db.exec('CREATE TABLE hook_deliveries (state TEXT, due_at INTEGER, lease_expires_at INTEGER)');
      const hook = db.prepare('INSERT INTO hook_deliveries VALUES (?, ?, ?)');
      for (const state of ['pending', 'done', 'failed'])
        for (const at of [99, 101]) for (const lease of times) hook.run(state, at, lease);
      const due = db
        .prepare(
          `SELECT state, due_at, lease_expires_at FROM hook_deliveries d WHERE ${hookCallDueSql('@now')}`,
        )
        .all({ now: 100 });
      expect(due).toEqual([
        { state: 'pending', due_at: 99, lease_expires_at: null },
        { state: 'pending', due_at: 99, lease_expires_at: 99 },
        { state: 'pending', due_at: 99, lease_expires_at: 100 },
      ]);
    } finally {
      db.close();
    }
  });

  it("the SQLite store's list of indexes is every index its migrations create, and every one its statements name", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-indexes-'));
    try {
      const path = join(dir, 'baton.db');
      await SqliteStore.open(path).close();
      const db = new Database(path, { readonly: true });
      const made = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
        .pluck()
        .all();
      db.close();
      expect([...SQLITE_INDEXES].sort()).toEqual(made);
      const named = new Set(
        findAll({ sql: /INDEXED BY/ }).flatMap(({ file }) =>
          [...readFileSync(join(srcDir, file), 'utf8').matchAll(/INDEXED BY (\w+)/g)].map((m) => m[1]!),
        ),
      );
      expect(named.size).toBeGreaterThan(5);
      expect([...named].filter((name) => !SQLITE_INDEXES.includes(name))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
