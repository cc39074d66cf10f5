/**
 * PostgresStore.waitForWork: woken by the NOTIFY of a commit that makes work due (at once, or at the
 * announced due time), by its own deadline, by abort, and still after its LISTEN connection is killed.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import type { NewRun } from '../src/store/store.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';
import { chainPlan } from './store-contract.js';

let server: TestPostgres;
let admin: pg.Pool;

beforeAll(async () => {
  server = await startPostgres();
  admin = new pg.Pool({ connectionString: server.url, max: 2 });
  admin.on('error', () => undefined);
}, 60_000);

afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

const run = (id: string, now = Date.now()): NewRun => ({
  id,
  plan: chainPlan(1),
  planHash: 'h',
  inputs: {},
  workspace: '/w',
  now,
});

/** Two stores on one schema: `sleeper` waits (30 s safety poll), `writer` makes work due. */
async function pair(appName: string) {
  const schema = freshSchemaName('wake');
  const url = `${server.url}?application_name=${appName}`;
  const sleeper = await PostgresStore.open(url, { schema, pollMs: 30_000 });
  const writer = await PostgresStore.open(server.url, { schema });
  // The first wait opens the LISTEN connection and returns once it is in place (missed notifications).
  await sleeper.waitForWork(Date.now() + 5000, new AbortController().signal);
  await sleeper.cycle({ owner: 'w', now: Date.now(), leaseMs: 1000, completions: [], claimLimit: 1, random });
  return { sleeper, writer, close: () => Promise.all([sleeper.close(), writer.close()]) };
}

const random = () => 0;

/** Milliseconds `waitForWork(untilMs)` took, running `during` once the wait has begun. */
async function timedWait(
  store: PostgresStore,
  untilMs: number,
  during: () => Promise<unknown> = async () => {},
) {
  const started = Date.now();
  const waiting = store.waitForWork(untilMs, new AbortController().signal);
  await during();
  await waiting;
  return Date.now() - started;
}

describe('PostgresStore.waitForWork', () => {
  it('wakes when another store commits due work, long before its deadline', async () => {
    const { sleeper, writer, close } = await pair('wake_a');
    try {
      const ms = await timedWait(sleeper, Date.now() + 20_000, () => writer.createRun(run('r1')));
      expect(ms).toBeLessThan(1000);
    } finally {
      await close();
    }
  });

  it('sleeps to its deadline when nothing is notified, and returns at once when aborted', async () => {
    const { sleeper, close } = await pair('wake_b');
    try {
      const ms = await timedWait(sleeper, Date.now() + 400);
      expect(ms).toBeGreaterThanOrEqual(390);
      expect(ms).toBeLessThan(1500);
      const abort = new AbortController();
      const started = Date.now();
      const waiting = sleeper.waitForWork(Date.now() + 20_000, abort.signal);
      setTimeout(() => abort.abort(), 50);
      await waiting;
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await close();
    }
  });

  it('wakes at the due time a notification announces, not before', async () => {
    const { sleeper, writer, close } = await pair('wake_c');
    try {
      // A run created with its first step due 700 ms from now (the NOTIFY payload is that time).
      const dueAt = Date.now() + 700;
      const ms = await timedWait(sleeper, Date.now() + 20_000, () => writer.createRun(run('r1', dueAt)));
      expect(ms).toBeGreaterThanOrEqual(600);
      expect(ms).toBeLessThan(2000);
    } finally {
      await close();
    }
  });

  it('listens again after its connection is terminated, and wakes the waiter on reconnecting', async () => {
    const { sleeper, writer, close } = await pair('wake_d');
    try {
      const kill = () =>
        admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'wake_d' AND query LIKE 'LISTEN %'",
        );
      // Terminated while waiting: the waiter is woken (notifications may have been missed) soon.
      const ms = await timedWait(sleeper, Date.now() + 20_000, kill);
      expect(ms).toBeLessThan(3000);
      await expect
        .poll(
          async () =>
            (
              await admin.query(
                "SELECT 1 FROM pg_stat_activity WHERE application_name = 'wake_d' AND query LIKE 'LISTEN %'",
              )
            ).rowCount,
          { timeout: 5000 },
        )
        .toBe(1);
      await sleeper.cycle({
        owner: 'w',
        now: Date.now(),
        leaseMs: 1000,
        completions: [],
        claimLimit: 1,
        random,
      });
      const again = await timedWait(sleeper, Date.now() + 20_000, () => writer.createRun(run('r2')));
      expect(again).toBeLessThan(1000);
    } finally {
      await close();
    }
  });
});
