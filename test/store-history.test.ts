/**
 * History: a store holding many finished runs. The runs list (and its status filter, how a caller
 * polls "still running?") is read from an index in order, never by scanning and sorting the runs
 * table; checked with EXPLAIN on both dialects, on the statements the store really runs. Timing
 * is left to bench/workloads/history.mjs.
 */
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { openSqliteDatabase } from '../src/store/sqlite/open-database.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { removeTempDirs, tempDir } from './helpers/cli.js';
import { freshSchemaName, usePostgres } from './helpers/postgres.js';

const plan = validatePlanObject({ name: 'live', steps: [{ id: 's', fn: 'noop' }] }, 'history');

/** The list calls a caller makes: every run, one status (polling), and the console's pages. */
async function listEveryWay(store: Store): Promise<void> {
  await store.listRuns();
  await store.listRuns({ status: 'running' });
  await store.listRuns({ status: 'succeeded', limit: 10 });
  await store.listRunPage();
  await store.listRunPage({ status: 'running' });
  await store.listRunPage({ status: 'succeeded', offset: 100 });
}

/** A few runs still going, created after the history (so they head the list). */
async function addLiveRuns(store: Store, at: number): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await store.createRun({ id: `live${i}`, plan, planHash: 'h', inputs: {}, workspace: '/ws', now: at + i });
  }
}

afterAll(() => removeTempDirs());

describe('SQLite: the runs list with 5,000 finished runs', () => {
  it('reads an index in list order for every shape of the list (no scan of runs, no sort)', async () => {
    const path = `${tempDir('baton-history-')}/baton.db`;
    const db = openSqliteDatabase(path);
    db.exec(`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 5000)
      INSERT INTO runs (id, plan_name, plan_hash, inputs_json, workspace, status, created_at, updated_at, finished_at)
      SELECT printf('h%06d', n), 'history', 'h', '{}', '/w', 'succeeded', n, n, n FROM g`);
    const store = new SqliteStore(db);
    await addLiveRuns(store, 10_000);

    // Every statement the list calls run, with the values they were given.
    const ran: { text: string; values: unknown[] }[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((text: string) => {
      const statement = prepare(text);
      const all = statement.all.bind(statement);
      statement.all = ((...values: unknown[]) => {
        ran.push({ text, values });
        return all(...values);
      }) as typeof statement.all;
      return statement;
    }) as typeof db.prepare;
    await listEveryWay(store);
    db.prepare = prepare;
    const lists = ran.filter((q) => /FROM runs\b.*ORDER BY created_at DESC, id DESC/s.test(q.text));

    expect((await store.listRuns({ status: 'running' })).map((r) => r.id)).toEqual([
      'live2',
      'live1',
      'live0',
    ]);
    expect((await store.listRuns({ limit: 4 })).map((r) => r.id)).toEqual([
      'live2',
      'live1',
      'live0',
      'h005000',
    ]);
    expect(lists).toHaveLength(6);
    for (const { text, values } of lists) {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...values) as { detail: string }[]).map(
        (row) => row.detail,
      );
      expect(plan, text).not.toContain('USE TEMP B-TREE FOR ORDER BY');
      expect(plan, text).not.toContain('SCAN runs');
      const index = text.includes('status = ?')
        ? /^SEARCH runs USING (COVERING )?INDEX runs_by_status \(status=\?\)$/
        : /^SCAN runs USING (COVERING )?INDEX runs_by_created$/;
      expect(
        plan.some((line) => index.test(line)),
        `${text}\n${plan.join('\n')}`,
      ).toBe(true);
    }
    // The console's counts per status, unfiltered, come from run_counts: nothing counted the runs.
    expect(ran.filter((q) => /count\(\*\)[\s\S]*FROM runs\b/.test(q.text))).toEqual([]);
    await store.close();
  });

  it('keeps the counts per status as runs are created, change status and are removed', async () => {
    const path = `${tempDir('baton-history-')}/baton.db`;
    const db = openSqliteDatabase(path);
    db.exec(`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 500)
      INSERT INTO runs (id, plan_name, plan_hash, inputs_json, workspace, status, created_at, updated_at, finished_at)
      SELECT printf('h%06d', n), 'history', 'h', '{}', '/w', IIF(n % 5 = 0, 'failed', 'succeeded'), n, n, n FROM g`);
    const store = new SqliteStore(db);
    const counted = () => db.prepare('SELECT status, count(*) AS n FROM runs GROUP BY status').all();
    const page = async () => (await store.listRunPage({ limit: 1 })).counts;
    expect(await page()).toEqual({ succeeded: 400, failed: 100 });
    await addLiveRuns(store, 10_000);
    await store.cancelRun('live0', 10_010);
    expect(await page()).toEqual({ succeeded: 400, failed: 100, running: 2, cancelled: 1 });
    expect(await store.listRunPage({ planName: 'live' })).toMatchObject({
      counts: { running: 2, cancelled: 1 },
      total: 3,
    });
    expect(await store.deleteFinishedRuns(1_000_000, { limit: 300 })).toHaveLength(300);
    const after = await page();
    expect(Object.entries(after).map(([status, n]) => ({ status, n }))).toEqual(
      expect.arrayContaining(counted() as { status: string; n: number }[]),
    );
    expect(Object.values(after).reduce((sum, n) => sum + (n ?? 0), 0)).toBe(203);
    await store.deleteFinishedRuns(1_000_000);
    expect(await page()).toEqual({ running: 2 });
    await store.close();
  });
});

describe('PostgreSQL: the runs list with 20,000 finished runs', () => {
  const pgc = usePostgres();

  interface PlanNode {
    'Node Type': string;
    'Relation Name'?: string;
    'Index Name'?: string;
    Plans?: PlanNode[];
  }
  const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];
  /** The nodes below `node` down to (not into) a Limit. */
  const unlimited = (node: PlanNode): PlanNode[] =>
    (node.Plans ?? []).flatMap((child) =>
      child['Node Type'] === 'Limit' ? [] : [child, ...unlimited(child)],
    );

  it('reads an index in list order for every shape of the list (no sequential scan of runs)', async () => {
    const schema = freshSchemaName('history');
    const store = await PostgresStore.open(pgc.server.url, { schema });
    try {
      await pgc.admin.query(
        `INSERT INTO "${schema}".runs (id, plan_name, plan_hash, inputs, workspace, status, created_at, updated_at,
           finished_at, concurrency)
         SELECT 'h' || lpad(g::text, 6, '0'), 'history', 'h', '{}', '/w', 'succeeded', g, g, g, 1
         FROM generate_series(1, 20000) g`,
      );
      await pgc.admin.query(`ANALYZE "${schema}".runs`);
      await addLiveRuns(store, 100_000);

      const pool = (store as unknown as { pool: pg.Pool }).pool;
      const ran: { text: string; values: unknown[] }[] = [];
      const query = pool.query.bind(pool);
      pool.query = ((text: string, values?: unknown[]) => {
        ran.push({ text, values: values ?? [] });
        return query(text, values);
      }) as typeof pool.query;
      await listEveryWay(store);
      pool.query = query;
      const lists = ran.filter((q) => /ORDER BY (r\.)?created_at DESC, (r\.)?id DESC/.test(q.text));

      expect((await store.listRuns({ status: 'running' })).map((r) => r.id)).toEqual([
        'live2',
        'live1',
        'live0',
      ]);
      expect(lists).toHaveLength(6);
      for (const { text, values } of lists) {
        const { rows } = await pgc.admin.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
          `EXPLAIN (FORMAT JSON) ${text}`,
          values,
        );
        const nodes = nodesOf(rows[0]!['QUERY PLAN'][0]!.Plan);
        const onRuns = nodes.filter((node) => node['Relation Name'] === 'runs');
        const shown = JSON.stringify(onRuns.map((n) => [n['Node Type'], n['Index Name']]));
        expect(
          onRuns.some((node) => node['Node Type'] === 'Seq Scan'),
          `${text}\n${shown}`,
        ).toBe(false);
        // Read in list order: no Sort over the runs below the page's Limit (a sort of the page's
        // own rows, above it, costs the page).
        const sortsRuns = nodes.some(
          (node) =>
            node['Node Type'].endsWith('Sort') && unlimited(node).some((n) => n['Relation Name'] === 'runs'),
        );
        expect(sortsRuns, `${text}\n${shown}`).toBe(false);
        expect(
          onRuns.some((node) => /^runs_by_(created|status)$/.test(node['Index Name'] ?? '')),
          `${text}\n${shown}`,
        ).toBe(true);
      }
    } finally {
      await store.close();
      await pgc.admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});
