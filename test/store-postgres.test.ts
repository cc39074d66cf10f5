import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { latestPostgresSchemaVersion } from '../src/store/postgres/schema-migrations.js';
import type { ClaimedStep, Completion, Store } from '../src/store/store.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';
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

let server: TestPostgres;
let admin: pg.Pool;

beforeAll(async () => {
  server = await startPostgres();
  admin = new pg.Pool({ connectionString: server.url, max: 4 });
  admin.on('error', () => undefined);
}, 60_000);

afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

const dropSchema = async (schema: string) => {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
};

/** A contract suite's store: a fresh schema per test, dropped afterwards. */
const schemaHarness = (label: string) => () => {
  const schema = freshSchemaName(label);
  return {
    open: () => PostgresStore.open(server.url, { schema }),
    reopen: () => PostgresStore.open(server.url, { schema }),
    cleanup: () => dropSchema(schema),
  };
};

// The contract suites, one per noun of the Store (src/store/contract/; test/store-contract.ts lists them).
describeStoreContract('postgres', schemaHarness('contract'));
describeFlowContract('postgres', schemaHarness('flow'));
describeWaitsContract('postgres', schemaHarness('waits'));
describeConsoleReadsContract('postgres', schemaHarness('console'));
describeWhenContract('postgres', schemaHarness('when'));
describeForEachContract('postgres', schemaHarness('foreach'));
describeSchedulesContract('postgres', schemaHarness('schedules'));
describeTriggersContract('postgres', schemaHarness('triggers'));
describeMetricsContract('postgres', schemaHarness('metrics'));
describeRerunContract('postgres', schemaHarness('rerun'));

const random = () => 0;
const ok = (claim: ClaimedStep, now: number): Completion => ({
  runId: claim.runId,
  stepId: claim.stepId,
  attempt: claim.attempt,
  owner: claim.owner,
  outcome: { ok: true, summary: `done ${claim.stepId}`, outputs: [] },
  startedAt: now - 1,
  endedAt: now,
  logPath: null,
});

describe('PostgreSQL store specifics', () => {
  const stores: Store[] = [];
  const open = async (schema: string, options: { poolSize?: number } = {}) => {
    const store = await PostgresStore.open(server.url, { schema, ...options });
    stores.push(store);
    return store;
  };
  const closeAll = async () => {
    for (const store of stores.splice(0)) await store.close();
  };

  it('runs against a real PostgreSQL 15 server that the harness started', async () => {
    // Reported, not asserted: how long the start takes depends on how busy the machine is.
    console.info(`postgres cluster started in ${server.startMs} ms`);
    const { rows } = await admin.query<{ version: string }>(
      "SELECT current_setting('server_version_num') AS version",
    );
    expect(rows[0]?.version).toMatch(/^15\d{4}$/);
  });

  it('refuses a schema newer than the code, naming both versions, and leaves the data untouched', async () => {
    const schema = freshSchemaName('newer');
    const store = await open(schema);
    await store.createRun({
      id: 'r',
      plan: chainPlan(2),
      planHash: 'h',
      inputs: {},
      workspace: '/w',
      now: 1,
    });
    await closeAll();
    await admin.query(`UPDATE "${schema}".baton_meta SET value = '999' WHERE key = 'schema_version'`);
    let error: unknown;
    try {
      await PostgresStore.open(server.url, { schema });
    } catch (e) {
      error = e;
    }
    expect(isBatonError(error, 'DB_TOO_NEW')).toBe(true);
    expect((error as Error).message).toMatch(
      new RegExp(
        `schema version 999 but this Baton knows only up to ${latestPostgresSchemaVersion()}\\b.*Upgrade Baton`,
      ),
    );
    const { rows } = await admin.query(
      `SELECT value FROM "${schema}".baton_meta WHERE key = 'schema_version'`,
    );
    expect(rows[0].value).toBe('999');
    await admin.query(
      `UPDATE "${schema}".baton_meta SET value = '${latestPostgresSchemaVersion()}' WHERE key = 'schema_version'`,
    );
    const again = await open(schema);
    expect((await again.getRun('r'))?.steps).toHaveLength(2);
    await closeAll();
    await dropSchema(schema);
  });

  it('gives running steps stored before flow control their key when it migrates, so limits count them', async () => {
    const schema = freshSchemaName('oldflow');
    const store = await open(schema);
    const plan = validatePlanObject({ name: 'old', steps: [{ id: 's', fn: 'noop' }] }, 'old');
    for (const id of ['a', 'b'])
      await store.createRun({ id, plan, planHash: 'h', inputs: {}, workspace: '/w', now: 1 });
    const cycle = (s: Store, now: number) =>
      s.cycle({ owner: 'w', now, leaseMs: 60_000, completions: [], claimLimit: 1, random: () => 0 });
    expect((await cycle(store, 10)).claimed).toHaveLength(1);
    await closeAll();
    // The schema as version 1 left it: no flow columns or tables, the runs list indexes of version 1.
    await admin.query(`ALTER TABLE "${schema}".steps DROP COLUMN flow_key; DROP TABLE "${schema}".flow_limits;
      ALTER TABLE "${schema}".steps DROP COLUMN interruptions; DROP INDEX "${schema}".runs_by_created;
      ALTER TABLE "${schema}".steps DROP COLUMN waiting_for; DROP TABLE "${schema}".wait_events;
      DROP INDEX "${schema}".hook_deliveries_failed; ALTER TABLE "${schema}".runs DROP COLUMN next_wait_at;
      DROP TABLE "${schema}".schedule_slots; DROP TABLE "${schema}".schedules;
      ALTER TABLE "${schema}".steps DROP CONSTRAINT steps_status_check;
      ALTER TABLE "${schema}".steps ADD CONSTRAINT steps_status_check CHECK (status IN ('pending', 'ready',
        'running', 'succeeded', 'retry_wait', 'blocked', 'skipped', 'degraded', 'cancelled'));
      DROP INDEX "${schema}".runs_by_status; CREATE INDEX runs_by_status ON "${schema}".runs (status, created_at);
      DROP TABLE "${schema}".run_labels; DROP TABLE "${schema}".trigger_deliveries; DROP TABLE "${schema}".triggers; ALTER TABLE "${schema}".runs DROP COLUMN next_rank;
      UPDATE "${schema}".baton_meta SET value = '1' WHERE key = 'schema_version'`);
    const migrated = await open(schema);
    await migrated.setFlowLimit({ key: 'fn:noop', concurrency: 1, rate: null }, 20);
    expect((await migrated.listFlowLimits(21))[0]?.running).toBe(1);
    expect((await cycle(migrated, 22)).claimed).toHaveLength(0);
    await closeAll();
    await dropSchema(schema);
  });

  it('gives runs stored before next_wait_at their waits’ due time when it migrates', async () => {
    const schema = freshSchemaName('oldwait');
    const store = await open(schema);
    const plan = validatePlanObject(
      {
        name: 'old',
        limits: { concurrency: 1 },
        steps: [
          { id: 'long', fn: 'noop' },
          { id: 'ask', wait: { for: 'approval', timeout: '1s', onTimeout: 'skip' } },
          { id: 'later', delayBeforeMs: 5000, wait: { for: 'approval' } },
        ],
      },
      'old',
    );
    await store.createRun({ id: 'r', plan, planHash: 'h', inputs: {}, workspace: '/w', now: 1 });
    await store.createRun({
      id: 'plain',
      plan: chainPlan(1),
      planHash: 'h',
      inputs: {},
      workspace: '/w',
      now: 1,
    });
    await store.cycle({ owner: 'w', now: 10, leaseMs: 60_000, completions: [], claimLimit: 1, random });
    expect((await store.getRun('r'))?.steps.find((s) => s.stepId === 'ask')?.status).toBe('waiting');
    await closeAll();
    await admin.query(`ALTER TABLE "${schema}".runs DROP COLUMN next_wait_at;
      DROP TABLE "${schema}".run_labels; DROP TABLE "${schema}".trigger_deliveries; DROP TABLE "${schema}".triggers; ALTER TABLE "${schema}".runs DROP COLUMN next_rank;
      UPDATE "${schema}".baton_meta SET value = '7' WHERE key = 'schema_version'`);
    await open(schema);
    const { rows } = await admin.query(`SELECT id, next_wait_at FROM "${schema}".runs ORDER BY id`);
    // ask times out at 10 + 1 s (later would start waiting at 1 + 5 s); a run without waits has none.
    expect(rows).toEqual([
      { id: 'plain', next_wait_at: null },
      { id: 'r', next_wait_at: '1010' },
    ]);
    await closeAll();
    await dropSchema(schema);
  });

  it('lets concurrent open() calls migrate a fresh schema together', async () => {
    const schema = freshSchemaName('race');
    const opened = await Promise.all(Array.from({ length: 6 }, () => open(schema, { poolSize: 2 })));
    expect(opened).toHaveLength(6);
    const { rows } = await admin.query(`SELECT key, value FROM "${schema}".baton_meta ORDER BY key`);
    expect(rows).toEqual([
      { key: 'app', value: 'baton' },
      { key: 'schema_version', value: String(latestPostgresSchemaVersion()) },
    ]);
    await closeAll();
    await dropSchema(schema);
  });

  it('never lets two stores claim the same step, claiming concurrently in a loop', async () => {
    const schema = freshSchemaName('claims');
    const [a, b] = [await open(schema, { poolSize: 4 }), await open(schema, { poolSize: 4 })];
    const wide = validatePlanObject(
      {
        name: 'wide',
        limits: { concurrency: 3 },
        steps: [
          ...Array.from({ length: 6 }, (_, i) => ({ id: `p${i}`, fn: 'noop' })),
          { id: 'join', fn: 'noop', dependsOn: ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'] },
        ],
      },
      'wide',
    );
    const runs = 30;
    for (let i = 0; i < runs; i++) {
      const plan = i % 2 === 0 ? wide : chainPlan(4);
      await a.createRun({ id: `run${i}`, plan, planHash: 'h', inputs: {}, workspace: '/w', now: 1000 });
    }
    const claims: ClaimedStep[] = [];
    let clock = 1000;
    // Two loops per store: four transactions claiming at once, each committing what it claimed last.
    const worker = async (store: Store, owner: string) => {
      let pending: Completion[] = [];
      for (let idle = 0; idle < 8; ) {
        const now = ++clock;
        const result = await store.cycle({
          owner,
          now,
          leaseMs: 600_000,
          completions: pending,
          claimLimit: 5,
          random,
        });
        expect(result.accepted.every(Boolean)).toBe(true);
        claims.push(...result.claimed);
        pending = result.claimed.map((claim) => ok(claim, now + 1));
        idle = pending.length === 0 ? idle + 1 : 0;
        if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
      }
    };
    await Promise.all([worker(a, 'A1'), worker(a, 'A2'), worker(b, 'B1'), worker(b, 'B2')]);
    const keys = claims.map((c) => `${c.runId}/${c.stepId}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toHaveLength((runs / 2) * 7 + (runs / 2) * 4);
    const owners = new Set(claims.map((c) => c.owner));
    expect(owners.size).toBeGreaterThan(1);
    for (const run of await a.listRuns({ limit: 100 })) expect(run.status).toBe('succeeded');
    await closeAll();
    await dropSchema(schema);
  });

  it('stays consistent and deadlock-free with short leases, renewals, retries and cancels racing', async () => {
    const schema = freshSchemaName('race');
    const pool = await Promise.all([0, 1, 2].map(() => open(schema, { poolSize: 4 })));
    const retry = { retry: { maxAttempts: 5, initialDelayMs: 0, maxDelayMs: 0 } };
    const fan = validatePlanObject(
      {
        name: 'fan',
        limits: { concurrency: 3 },
        defaults: retry,
        steps: [
          ...Array.from({ length: 5 }, (_, i) => ({ id: `p${i}`, fn: 'noop' })),
          { id: 'j', fn: 'noop', dependsOn: ['p0', 'p1', 'p2', 'p3', 'p4'] },
        ],
      },
      'fan',
    );
    const runs = 60;
    for (let i = 0; i < runs; i++) {
      const plan = i % 2 ? fan : chainPlan(3, { defaults: retry });
      await pool[0]!.createRun({ id: `r${i}`, plan, planHash: 'h', inputs: {}, workspace: '/w', now: 0 });
    }
    const errors: unknown[] = [];
    const started = Date.now();
    const clock = () => Date.now() - started + 1;
    // Seeded failures, renewals and cancels (the interleaving of the workers still varies).
    let seed = 42;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const worker = async (store: Store, owner: string) => {
      let pending: Completion[] = [];
      for (let idle = 0; idle < 20; ) {
        const now = clock();
        try {
          const { claimed } = await store.cycle({
            owner,
            now,
            leaseMs: 30,
            completions: pending,
            claimLimit: 4,
            random: rand,
          });
          if (claimed.length > 0 && rand() < 0.3) await store.renewLeases(owner, claimed, 30, clock());
          await new Promise((resolve) => setTimeout(resolve, rand() * 8));
          pending = claimed.map((claim) => {
            const done = ok(claim, clock());
            return rand() < 0.2
              ? { ...done, outcome: { ok: false, failureClass: 'transient', message: `t${claim.attempt}` } }
              : done;
          });
          idle = pending.length === 0 ? idle + 1 : 0;
        } catch (error) {
          errors.push(error);
          idle++;
        }
      }
    };
    const human = async () => {
      for (let i = 0; i < 30; i++) {
        try {
          await pool[2]!.cancelRun(`r${Math.floor(rand() * runs)}`, clock());
        } catch (error) {
          if (!isBatonError(error, 'INVALID_TRANSITION')) errors.push(error);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    await Promise.all([
      human(),
      ...pool.flatMap((store, i) => [worker(store, `w${i}a`), worker(store, `w${i}b`)]),
    ]);
    expect(errors).toEqual([]);
    const q = (sql: string) => admin.query(sql.replaceAll('S.', `"${schema}".`)).then((r) => r.rows);
    // No attempt was started twice; the claim columns agree with the steps they summarise.
    expect(
      await q(`SELECT run_id, step_id, data->>'attempt' FROM S.events WHERE type = 'step.started'
               GROUP BY 1, 2, 3 HAVING count(*) > 1`),
    ).toEqual([]);
    expect(
      await q(`SELECT id FROM S.runs r
               WHERE running_count <> (SELECT count(*) FROM S.steps s WHERE s.run_id = r.id AND s.status = 'running')
                  OR next_due_at IS DISTINCT FROM (SELECT min(due_at) FROM S.steps s
                       WHERE s.run_id = r.id AND s.status IN ('ready', 'retry_wait'))`),
    ).toEqual([]);
    for (const run of await pool[0]!.listRuns({ limit: runs })) expect(run.status).not.toBe('running');
    await closeAll();
    await dropSchema(schema);
  });

  it('honours the schema option and refuses an invalid schema name before connecting', async () => {
    const schema = freshSchemaName('custom');
    await open(schema);
    const { rows } = await admin.query(
      "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename = 'runs'",
      [schema],
    );
    expect(rows).toHaveLength(1);
    for (const bad of ['Bad', '1abc', 'a-b', 'x"; DROP TABLE runs; --', 'a'.repeat(64), '']) {
      await expect(
        PostgresStore.open('postgres://nobody@127.0.0.1:1/none', { schema: bad }),
      ).rejects.toSatisfy(
        (e) => isBatonError(e, 'CONFIG_INVALID') && (e as Error).message.includes('postgres schema'),
      );
    }
    await closeAll();
    await dropSchema(schema);
  });

  it('uses the schema "baton" by default', async () => {
    await dropSchema('baton');
    const store = await PostgresStore.open(server.url);
    stores.push(store);
    const { rows } = await admin.query(
      "SELECT 1 FROM pg_tables WHERE schemaname = 'baton' AND tablename = 'steps'",
    );
    expect(rows).toHaveLength(1);
    await closeAll();
    await dropSchema('baton');
  });

  it('refuses a schema holding tables it did not make, and an unreachable server, with clear errors', async () => {
    const schema = freshSchemaName('foreign');
    await admin.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".invoices (id int)`);
    await expect(PostgresStore.open(server.url, { schema })).rejects.toThrow(
      /not made by Baton \(tables: invoices\)/,
    );
    await dropSchema(schema);
    await expect(PostgresStore.open(`postgres://postgres:secret@127.0.0.1:1/postgres`)).rejects.toSatisfy(
      (e) => isBatonError(e, 'CONFIG_INVALID') && !(e as Error).message.includes('secret'),
    );
  });

  it('notifies baton_<schema> when a commit makes work due', async () => {
    const schema = freshSchemaName('notify');
    const store = await open(schema);
    const listener = await admin.connect();
    const payloads: string[] = [];
    listener.on('notification', (message) => {
      if (message.channel === `baton_${schema}`) payloads.push(message.payload ?? '');
    });
    try {
      await listener.query(`LISTEN baton_${schema}`);
      await store.createRun({
        id: 'r',
        plan: chainPlan(2),
        planHash: 'h',
        inputs: {},
        workspace: '/w',
        now: 1000,
      });
      const [claim] = (
        await store.cycle({ owner: 'w', now: 1000, leaseMs: 1000, completions: [], claimLimit: 1, random })
      ).claimed;
      // Claiming made nothing due; completing s1 makes s2 due (left unclaimed: claimLimit 0).
      await store.cycle({
        owner: 'w',
        now: 1010,
        leaseMs: 1000,
        completions: [ok(claim!, 1010)],
        claimLimit: 0,
        random,
      });
      await expect.poll(() => payloads).toEqual(['1000', '1010']);
      // A proposed run makes nothing due until it is approved.
      const plan = chainPlan(1);
      await store.createRun({
        id: 'p',
        plan,
        planHash: 'h',
        inputs: {},
        workspace: '/w',
        now: 2000,
        awaitingApproval: true,
      });
      await store.approveRun('p', 2100);
      await expect.poll(() => payloads).toEqual(['1000', '1010', '2100']);
    } finally {
      await listener.query(`UNLISTEN *`);
      listener.release();
    }
    await closeAll();
    await dropSchema(schema);
  });

  it('commits a completion and claims the successor in five round trips', async () => {
    const schema = freshSchemaName('trips');
    const store = await open(schema);
    await store.createRun({
      id: 'r',
      plan: chainPlan(2),
      planHash: 'h',
      inputs: {},
      workspace: '/w',
      now: 1000,
    });
    const [claim] = (
      await store.cycle({ owner: 'w', now: 1000, leaseMs: 1000, completions: [], claimLimit: 1, random })
    ).claimed;
    const query = pg.Client.prototype.query;
    let trips = 0;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      trips++;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      // Not a reclaim turn (those add no statement either: the same lock statement looks).
      const next = await store.cycle({
        owner: 'w',
        now: 1100,
        leaseMs: 1000,
        completions: [ok(claim!, 1100)],
        claimLimit: 1,
        random,
      });
      expect(next.claimed.map((c) => c.stepId)).toEqual(['s2']);
    } finally {
      pg.Client.prototype.query = query;
    }
    // BEGIN, lock, load, write, COMMIT.
    expect(trips).toBe(5);
    await closeAll();
    await dropSchema(schema);
  });

  it('keeps working across a server restart', async () => {
    const schema = freshSchemaName('restart');
    const store = await open(schema);
    await store.createRun({
      id: 'r',
      plan: chainPlan(1),
      planHash: 'h',
      inputs: {},
      workspace: '/w',
      now: 1000,
    });
    await server.restart();
    let claimed: ClaimedStep[] = [];
    await expect
      .poll(async () => {
        try {
          claimed = (
            await store.cycle({
              owner: 'w',
              now: 1000,
              leaseMs: 1000,
              completions: [],
              claimLimit: 1,
              random,
            })
          ).claimed;
          return claimed.length;
        } catch {
          return -1;
        }
      })
      .toBe(1);
    expect((await store.getRun('r'))?.steps[0]?.status).toBe('running');
    await closeAll();
    await dropSchema(schema);
  });

  it('stores NUL characters without failing, records usage, events and effects', async () => {
    const schema = freshSchemaName('misc');
    const store = await open(schema);
    await store.createRun({
      id: 'r',
      plan: chainPlan(2),
      planHash: 'h',
      inputs: {},
      workspace: '/w',
      now: 1000,
    });
    const [claim] = (
      await store.cycle({ owner: 'w', now: 1000, leaseMs: 1000, completions: [], claimLimit: 1, random })
    ).claimed;
    const failed: Completion = {
      ...ok(claim!, 1010),
      outcome: {
        ok: false,
        failureClass: 'agent_failed',
        message: 'bad\u0000byte',
        usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.25 },
      },
    };
    const result = await store.cycle({
      owner: 'w',
      now: 1010,
      leaseMs: 1000,
      completions: [failed],
      claimLimit: 1,
      random,
    });
    expect(result.accepted).toEqual([true]);
    // The claim made in the same cycle still holds the message as given; the database holds U+FFFD.
    expect(result.claimed[0]?.lastError).toBe('bad\u0000byte');
    expect((await store.getRun('r'))?.steps[0]?.lastError).toBe('bad\uFFFDbyte');
    const attempts = await store.getAttempts('r', 's1');
    expect(attempts[0]).toMatchObject({
      outcome: 'failed',
      usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.25 },
    });
    expect((await store.getRun('r'))?.usage).toEqual({ inputTokens: 10, outputTokens: 5, costUsd: 0.25 });
    expect((await store.listRuns())[0]?.usage).toEqual({ inputTokens: 10, outputTokens: 5, costUsd: 0.25 });

    await store.appendEvents('r', [{ type: 'tool.replayed', stepId: 's1', tool: 'write', key: 'k' }], 1020);
    const events = await store.getEvents('r');
    expect(events[events.length - 1]).toMatchObject({
      type: 'tool.replayed',
      stepId: 's1',
      runId: 'r',
      at: 1020,
    });
    await expect(store.appendEvents('nope', [{ type: 'run.cancelled' }], 1)).rejects.toSatisfy((e) =>
      isBatonError(e, 'RUN_NOT_FOUND'),
    );

    const key = { runId: 'r', stepId: 's1', key: 'send-mail' };
    expect(await store.beginEffect(key, 1)).toBeNull();
    expect(await store.beginEffect(key, 2)).toEqual({ state: 'intent' });
    await store.clearEffect(key);
    expect(await store.beginEffect(key, 3)).toBeNull();
    await store.completeEffect(key, { id: 42 }, 4);
    expect(await store.beginEffect(key, 5)).toEqual({ state: 'done', result: { id: 42 } });
    await closeAll();
    await dropSchema(schema);
  });
});
