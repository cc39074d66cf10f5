import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { openSqliteDatabase } from '../src/store/sqlite/open-database.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { prepareStoreStatements } from '../src/store/sqlite/store-statements.js';
import { walCommits } from './helpers/sqlite-wal.js';
import { describeConsoleReadsContract } from './store-console-contract.js';
import { chainPlan, describeStoreContract } from './store-contract.js';
import { describeFlowContract } from './store-flow-contract.js';
import { describeForEachContract } from './store-for-each-contract.js';
import { describeMetricsContract } from './store-metrics-contract.js';
import { describeRerunContract } from './store-rerun-contract.js';
import { describeSchedulesContract } from './store-schedules-contract.js';
import { describeTriggersContract } from './store-triggers-contract.js';
import { describeWaitsContract } from './store-waits-contract.js';
import { describeWhenContract } from './store-when-contract.js';

/** A contract suite's store: a database file in a fresh folder per test, removed afterwards. */
const fileHarness = (prefix: string) => () => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const path = join(dir, 'baton.db');
  return {
    open: async () => SqliteStore.open(path),
    reopen: async () => SqliteStore.open(path),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
};

// The contract suites, one per noun of the Store (src/store/contract/; test/store-contract.ts lists them).
describeStoreContract('sqlite', fileHarness('baton-store-'));
describeFlowContract('sqlite', fileHarness('baton-flow-'));
describeWaitsContract('sqlite', fileHarness('baton-waits-'));
describeConsoleReadsContract('sqlite', fileHarness('baton-console-'));
describeWhenContract('sqlite', fileHarness('baton-when-'));
describeForEachContract('sqlite', fileHarness('baton-foreach-'));
describeSchedulesContract('sqlite', fileHarness('baton-schedules-'));
describeTriggersContract('sqlite', fileHarness('baton-triggers-'));
describeMetricsContract('sqlite', fileHarness('baton-metrics-'));
describeRerunContract('sqlite', fileHarness('baton-rerun-'));

describe('SQLite store specifics', () => {
  const dirs: string[] = [];
  const tempDb = () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-sqlite-'));
    dirs.push(dir);
    return join(dir, 'nested', 'baton.db');
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  /** s1 -> s2, both `fn: noop`. */
  const twoStepPlan = () =>
    validatePlanObject(
      {
        name: 'p',
        steps: [
          { id: 's1', fn: 'noop' },
          { id: 's2', fn: 'noop', dependsOn: ['s1'] },
        ],
      },
      'p',
    );

  it('never serves a run deleted by gc and created again through another handle from its caches', async () => {
    // The new run starts at the versions the old one had: a cache keyed by version alone served the
    // old run's steps, and accepted the old attempt's late report into the new run.
    const path = tempDb();
    const a = SqliteStore.open(path);
    const b = SqliteStore.open(path);
    const fresh = SqliteStore.open(path);
    const plan = twoStepPlan();
    const cycle = (
      store: SqliteStore,
      owner: string,
      now: number,
      completions: Parameters<SqliteStore['cycle']>[0]['completions'] = [],
    ) => store.cycle({ owner, now, leaseMs: 600_000, completions, claimLimit: 10, random: () => 0 });
    try {
      await a.createRun({ id: 'R', plan, planHash: 'h', inputs: {}, workspace: '/w', now: 1 });
      expect((await cycle(a, 'wA', 10)).claimed.map((c) => c.stepId)).toEqual(['s1']);
      expect((await a.getRun('R'))?.steps[0]?.leaseOwner).toBe('wA');
      await b.cancelRun('R', 20);
      expect(await b.deleteFinishedRuns(1000)).toEqual(['R']);
      await b.createRun({ id: 'R', plan, planHash: 'h', inputs: {}, workspace: '/w', now: 30 });
      expect((await cycle(b, 'wB', 31)).claimed.map((c) => c.stepId)).toEqual(['s1']);
      const truth = await fresh.getRun('R');
      expect(truth?.steps[0]?.leaseOwner).toBe('wB');
      expect((await a.getRun('R'))?.steps).toEqual(truth?.steps);
      const late = {
        runId: 'R',
        stepId: 's1',
        attempt: 1,
        owner: 'wA',
        outcome: { ok: true as const, summary: 'from the deleted run', outputs: [] },
        startedAt: 10,
        endedAt: 40,
        logPath: null,
      };
      expect((await cycle(a, 'wA', 40, [late])).accepted).toEqual([false]);
      expect((await fresh.getRun('R'))?.steps[0]).toMatchObject({ status: 'running', leaseOwner: 'wB' });
    } finally {
      for (const store of [a, b, fresh]) await store.close();
    }
  });

  it('keeps no finished run in its caches, and one parsed plan for runs of the same plan', async () => {
    // A worker that runs for months must not hold the last 10,000 finished runs (about 12 KB each).
    const store = SqliteStore.open(tempDb());
    const plan = validatePlanObject({ name: 'p', steps: [{ id: 's', fn: 'noop' }] }, 'p');
    try {
      for (const id of ['a', 'b', 'c'])
        await store.createRun({ id, plan, planHash: 'h', inputs: {}, workspace: '/w', now: 1 });
      const cycle = (now: number, completions: Parameters<SqliteStore['cycle']>[0]['completions']) =>
        store.cycle({ owner: 'w', now, leaseMs: 60_000, completions, claimLimit: 10, random: () => 0 });
      const { claimed } = await cycle(10, []);
      expect(claimed).toHaveLength(3);
      const rows = (store as unknown as { rows: Record<string, Map<string, unknown>> }).rows;
      const plans = claimed.map(
        (claim) => (rows.cycleCache.get(claim.runId) as { state: { plan: unknown } }).state.plan,
      );
      expect(new Set(plans).size).toBe(1);
      const done = (runId: string) => ({
        runId,
        stepId: 's',
        attempt: 1,
        owner: 'w',
        outcome: { ok: true as const, summary: 'ok', outputs: [] },
        startedAt: 10,
        endedAt: 11,
        logPath: null,
      });
      await cycle(20, [done('a'), done('b')]);
      for (const cache of [rows.cycleCache, rows.stateCache, rows.planCache])
        expect([...cache.keys()].sort()).toEqual(['c']);
      expect((await store.getRun('a'))?.status).toBe('succeeded');
    } finally {
      await store.close();
    }
  });

  it("runs that share a parsed plan hand it out frozen: a caller's change throws instead of changing the other run", async () => {
    const store = SqliteStore.open(tempDb());
    const plan = twoStepPlan();
    try {
      for (const id of ['A', 'B'])
        await store.createRun({ id, plan, planHash: 'h', inputs: {}, workspace: '/w', now: 1 });
      const a = (await store.getRun('A'))!;
      const b = (await store.getRun('B'))!;
      expect(a.plan).toBe(b.plan);
      expect(() => a.steps[1]!.dependsOn.push('extra')).toThrow(TypeError);
      expect(() => {
        a.plan.steps[0]!.timeoutMs = 5;
      }).toThrow(TypeError);
      const again = (await store.getRun('B'))!;
      expect(again.steps[1]!.dependsOn).toEqual(['s1']);
      expect(again.plan.steps[0]!.timeoutMs).toBe(plan.steps[0]!.timeoutMs);
    } finally {
      await store.close();
    }
  });

  it('gives running steps stored before flow control their key when it migrates, so limits count them', async () => {
    const path = tempDb();
    const store = SqliteStore.open(path);
    const plan = validatePlanObject({ name: 'old', steps: [{ id: 's', fn: 'noop' }] }, 'old');
    for (const id of ['a', 'b'])
      await store.createRun({ id, plan, planHash: 'h', inputs: {}, workspace: '/w', now: 1 });
    const cycle = (s: SqliteStore, now: number) =>
      s.cycle({ owner: 'w', now, leaseMs: 60_000, completions: [], claimLimit: 1, random: () => 0 });
    expect((await cycle(store, 10)).claimed).toHaveLength(1);
    await store.close();
    // The database as schema 3 left it: no flow columns, tables or indexes.
    const db = new Database(path);
    db.exec(`DROP INDEX steps_stopping_flow; DROP INDEX runs_by_created; DROP TABLE run_counts;
      DROP TRIGGER run_counts_insert; DROP TRIGGER run_counts_update; DROP TRIGGER run_counts_delete; ALTER TABLE steps DROP COLUMN flow_key;
      ALTER TABLE steps DROP COLUMN interruptions;
      DROP INDEX steps_waiting_for; ALTER TABLE steps DROP COLUMN waiting_for; DROP TABLE wait_events; DROP INDEX hook_deliveries_failed;
      DROP TABLE flow_limits; DROP TABLE schedule_slots; DROP TABLE schedules;
      DROP TABLE run_labels; DROP TABLE trigger_deliveries; DROP TABLE triggers; DROP INDEX steps_claim; ALTER TABLE steps DROP COLUMN claim_rank;
      UPDATE baton_meta SET value = '3' WHERE key = 'schema_version';`);
    db.close();
    const migrated = SqliteStore.open(path);
    try {
      await migrated.setFlowLimit({ key: 'fn:noop', concurrency: 1, rate: null }, 20);
      expect((await migrated.listFlowLimits(21))[0]?.running).toBe(1);
      expect((await cycle(migrated, 22)).claimed).toHaveLength(0);
    } finally {
      await migrated.close();
    }
  });

  it('reads due steps in claim order (claim rank, due time, run, plan position) from the index, without sorting, once migrated from schema 6', async () => {
    const path = tempDb();
    await SqliteStore.open(path).close();
    // The database as schema 6 left it: due steps indexed by due time alone.
    const old = new Database(path);
    old.exec(`DROP INDEX steps_due;
      CREATE INDEX steps_due ON steps (due_at) WHERE status IN ('ready', 'retry_wait');
      DROP INDEX steps_waiting_for; ALTER TABLE steps DROP COLUMN waiting_for; DROP TABLE wait_events; DROP INDEX hook_deliveries_failed;
      DROP TABLE schedule_slots; DROP TABLE schedules;
      DROP TABLE run_labels; DROP TABLE trigger_deliveries; DROP TABLE triggers; DROP INDEX steps_claim; ALTER TABLE steps DROP COLUMN claim_rank;
      UPDATE baton_meta SET value = '6' WHERE key = 'schema_version';`);
    old.close();
    const db = openSqliteDatabase(path);
    try {
      const statements = prepareStoreStatements(db);
      // Pages of a fan-out of many steps due at once stop at their limit: nothing is read whole to be sorted.
      for (const statement of [statements.dueCandidates, statements.dueCandidatesUnsaturated]) {
        const values =
          statement === statements.dueCandidates
            ? [0, 0, 0, 0, 0, '', 0, 64]
            : [0, 0, 0, 0, 0, '', 0, '[]', 64];
        const plan = (
          db.prepare(`EXPLAIN QUERY PLAN ${statement.source}`).all(...values) as { detail: string }[]
        ).map((row) => row.detail);
        expect(plan.join('\n')).toMatch(/^SEARCH s USING INDEX steps_claim /m);
        expect(plan.join('\n')).not.toContain('TEMP B-TREE');
      }
    } finally {
      db.close();
    }
  });

  it("writes a step's status without building a temporary table for the due-steps index, once migrated from schema 8", async () => {
    const path = tempDb();
    await SqliteStore.open(path).close();
    // The database as schema 8 left it: due steps' statuses as an IN list of three.
    const old = new Database(path);
    old.exec(`DROP INDEX steps_due;
      CREATE INDEX steps_due ON steps (due_at, run_id, position) WHERE status IN ('ready', 'retry_wait', 'waiting');
      DROP INDEX hook_deliveries_failed; DROP TABLE schedule_slots; DROP TABLE schedules;
      DROP TABLE run_labels; DROP TABLE trigger_deliveries; DROP TABLE triggers; DROP INDEX steps_claim; ALTER TABLE steps DROP COLUMN claim_rank;
      UPDATE baton_meta SET value = '8' WHERE key = 'schema_version';`);
    const update = 'EXPLAIN UPDATE steps SET status = ?, due_at = ? WHERE run_id = ? AND step_id = ?';
    const opcodes = (db: { prepare: (sql: string) => { all: (...v: unknown[]) => unknown[] } }) =>
      (db.prepare(update).all('ready', 0, 'r', 's') as { opcode: string }[]).map((row) => row.opcode);
    // SQLite checks a partial index's condition on every write of its columns: for an IN list of
    // three constants it first fills a temporary b-tree with them, at every step a cycle writes.
    expect(opcodes(old)).toContain('OpenEphemeral');
    old.close();
    const db = openSqliteDatabase(path);
    try {
      expect(opcodes(db)).not.toContain('OpenEphemeral');
      // The claim still reads its page from the index (the query names the index's condition).
      const statements = prepareStoreStatements(db);
      const plan = (
        db.prepare(`EXPLAIN QUERY PLAN ${statements.dueCandidates.source}`).all(0, 0, 0, 0, 0, '', 0, 64) as {
          detail: string;
        }[]
      ).map((row) => row.detail);
      expect(plan.join('\n')).toMatch(/^SEARCH s USING INDEX steps_claim /m);
    } finally {
      db.close();
    }
  });
  describe('runs started at once are group-committed', () => {
    const plan = validatePlanObject({ name: 'g', steps: [{ id: 's', fn: 'noop' }] }, 'g');
    const spec = (id: string) => ({ id, plan, planHash: 'h', inputs: {}, workspace: '/w', now: 1 });
    const cycle = (s: SqliteStore, claimLimit: number) =>
      s.cycle({ owner: 'w', now: 10, leaseMs: 60_000, completions: [], claimLimit, random: () => 0 });

    it('twenty runs started at once cost one commit, not twenty', async () => {
      const path = tempDb();
      const store = SqliteStore.open(path);
      try {
        const before = walCommits(path);
        await Promise.all(Array.from({ length: 20 }, (_, i) => store.createRun(spec(`r${i}`))));
        expect(walCommits(path) - before).toBe(1);
        expect(await store.listRuns({})).toHaveLength(20);
      } finally {
        await store.close();
      }
    });

    it('a cycle stores the runs queued before it and claims their first steps in the same transaction', async () => {
      const path = tempDb();
      const store = SqliteStore.open(path);
      try {
        const before = walCommits(path);
        const created = ['a', 'b', 'c'].map((id) => store.createRun(spec(id)));
        // No turn of the event loop in between: the cycle's own transaction must store them.
        const claimed = (await cycle(store, 10)).claimed.map((claim) => claim.runId).sort();
        expect(claimed).toEqual(['a', 'b', 'c']);
        expect(walCommits(path) - before).toBe(1);
        expect((await Promise.all(created)).map((run) => run.status)).toEqual([
          'running',
          'running',
          'running',
        ]);
      } finally {
        await store.close();
      }
    });

    it('a run whose id is taken fails alone; the others of its group are stored', async () => {
      const path = tempDb();
      const store = SqliteStore.open(path);
      try {
        await store.createRun(spec('taken'));
        const results = await Promise.allSettled(['x', 'taken', 'y'].map((id) => store.createRun(spec(id))));
        expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
        expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
        const other = SqliteStore.open(path);
        try {
          expect((await other.listRuns({})).map((run) => run.id).sort()).toEqual(['taken', 'x', 'y']);
          expect(await other.getEvents('taken')).toHaveLength(1);
        } finally {
          await other.close();
        }
      } finally {
        await store.close();
      }
    });

    it('close stores the runs still queued', async () => {
      const path = tempDb();
      const store = SqliteStore.open(path);
      const created = store.createRun(spec('late'));
      await store.close();
      expect((await created).id).toBe('late');
      const other = SqliteStore.open(path);
      try {
        expect((await other.getRun('late'))?.status).toBe('running');
      } finally {
        await other.close();
      }
    });
  });

  describe('runs kept in memory between cycles', () => {
    const plan = validatePlanObject(
      {
        name: 'chain',
        steps: [
          { id: 'a', fn: 'noop' },
          { id: 'b', fn: 'noop', dependsOn: ['a'] },
        ],
      },
      'chain',
    );
    const ok = { ok: true as const, summary: 'done', outputs: [] };
    const completion = (stepId: string) => ({
      runId: 'r',
      stepId,
      attempt: 1,
      owner: 'w',
      outcome: ok,
      startedAt: 1,
      endedAt: 2,
      logPath: null,
    });
    const cycle = (s: SqliteStore, now: number, completions: ReturnType<typeof completion>[] = []) =>
      s.cycle({ owner: 'w', now, leaseMs: 60_000, completions, claimLimit: 4, random: () => 0 });

    // Each test: a fresh database holding run `r` (a -> b), driven through `store`.
    let path: string;
    let store: SqliteStore;
    beforeEach(async () => {
      path = tempDb();
      store = SqliteStore.open(path);
      await store.createRun({
        id: 'r',
        plan,
        planHash: 'h',
        inputs: { topic: 'tides' },
        workspace: '/w',
        now: 1,
      });
    });
    afterEach(() => store.close());

    it('sees a change another connection committed between two cycles', async () => {
      const other = SqliteStore.open(path);
      try {
        expect((await cycle(store, 10)).claimed.map((c) => c.stepId)).toEqual(['a']);
        await other.cancelRun('r', 11);
        // Had the worker used the run as its last cycle left it, it would accept `a` and claim `b`.
        const after = await cycle(store, 12, [completion('a')]);
        expect(after.accepted).toEqual([false]);
        expect(after.claimed).toEqual([]);
        expect((await store.getRun('r'))?.status).toBe('cancelled');
      } finally {
        await other.close();
      }
    });

    it('sees a run its own connection cancelled outside a cycle (which data_version does not count)', async () => {
      expect((await cycle(store, 10)).claimed.map((c) => c.stepId)).toEqual(['a']);
      await store.cancelRun('r', 11);
      const after = await cycle(store, 12, [completion('a')]);
      expect(after.accepted).toEqual([false]);
      expect(after.claimed).toEqual([]);
    });

    it("hands each claim its own copy of the run's inputs", async () => {
      const [a] = (await cycle(store, 10)).claimed;
      // A step function that writes to ctx.inputs changes nothing a later step sees.
      a!.inputs.topic = 'changed';
      const [b] = (await cycle(store, 11, [completion('a')])).claimed;
      expect(b?.stepId).toBe('b');
      expect(b?.inputs).toEqual({ topic: 'tides' });
    });

    it('drives a run across cycles from memory and stores exactly what a fresh reader sees', async () => {
      await cycle(store, 10);
      expect((await cycle(store, 11, [completion('a')])).claimed.map((c) => c.stepId)).toEqual(['b']);
      expect((await cycle(store, 12, [completion('b')])).accepted).toEqual([true]);
      const fresh = SqliteStore.open(path);
      try {
        const run = await fresh.getRun('r');
        expect(run?.status).toBe('succeeded');
        expect(run?.steps.map((step) => step.status)).toEqual(['succeeded', 'succeeded']);
      } finally {
        await fresh.close();
      }
    });
  });

  it('creates the database 0600 in WAL mode with synchronous=FULL, and keeps data across reopen', async () => {
    const path = tempDb();
    const store = SqliteStore.open(path);
    await store.createRun({
      id: 'r',
      plan: chainPlan(2),
      planHash: 'h',
      inputs: {},
      workspace: '/w',
      now: 1,
    });
    await store.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const db = new Database(path, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    const again = SqliteStore.open(path);
    expect((await again.getRun('r'))?.steps).toHaveLength(2);
    await again.close();
  });

  it('refuses a database newer than the code and leaves it untouched', () => {
    const path = tempDb();
    SqliteStore.open(path).close();
    const db = new Database(path);
    db.prepare("UPDATE baton_meta SET value = '999' WHERE key = 'schema_version'").run();
    db.close();
    const before = readFileSync(path);
    expect(() => SqliteStore.open(path)).toThrow(/schema version 999.*Upgrade Baton/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('refuses a corrupt file and a foreign SQLite database without changing them', () => {
    const corrupt = tempDb();
    SqliteStore.open(corrupt).close();
    rmSync(corrupt);
    writeFileSync(corrupt, Buffer.alloc(8192, 7));
    const bytes = readFileSync(corrupt);
    let error: unknown;
    try {
      SqliteStore.open(corrupt);
    } catch (e) {
      error = e;
    }
    expect(isBatonError(error, 'DB_CORRUPT')).toBe(true);
    expect(String((error as Error).message)).toContain('not a readable Baton database');
    expect(readFileSync(corrupt).equals(bytes)).toBe(true);

    const foreign = tempDb();
    SqliteStore.open(foreign).close();
    rmSync(foreign);
    const db = new Database(foreign);
    db.exec('CREATE TABLE invoices (id INTEGER PRIMARY KEY)');
    db.close();
    expect(() => SqliteStore.open(foreign)).toThrow(/not made by Baton \(tables: invoices\)/);
  });
});
