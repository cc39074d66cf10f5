import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import type { NewRun } from '../src/store/store.js';
import { freshSchemaName, usePostgres } from './helpers/postgres.js';
import { chainPlan } from './store-contract.js';

const pgc = usePostgres();

const run = (id: string, now = Date.now()): NewRun => ({
  id,
  plan: chainPlan(1),
  planHash: 'h',
  inputs: {},
  workspace: '/w',
  now,
});

/** Two stores on one schema: `sleeper` waits (its safety poll is 10 minutes away), `writer` makes work due. */
async function pair(appName: string) {
  const schema = freshSchemaName('wake');
  const url = `${pgc.server.url}?application_name=${appName}`;
  const sleeper = await PostgresStore.open(url, { schema, pollMs: 600_000 });
  const writer = await PostgresStore.open(pgc.server.url, { schema });
  // The first wait opens the LISTEN connection and returns once it is in place (missed notifications).
  await sleeper.waitForWork(Date.now() + 5000, new AbortController().signal);
  await sleeper.cycle({ owner: 'w', now: Date.now(), leaseMs: 1000, completions: [], claimLimit: 1, random });
  return { sleeper, writer, close: () => Promise.all([sleeper.close(), writer.close()]) };
}

const random = () => 0;

/**
 * A deadline 20 s away, far beyond any plausible wake-up delay even on a loaded machine; the
 * safety poll is 10 minutes away. A wait that returned in the first half of it was woken, not
 * timed out. (The one wall-clock bound here: it tells a wake-up from the deadline, it does not
 * time the wake-up; a timer may fire a millisecond early, so "before the deadline" would not do.)
 */
const farDeadline = () => Date.now() + 20_000;
const wokenBy = (until: number) => until - 10_000;

/** Waits with `waitForWork(untilMs)`, running `during` once the wait has begun; returns when it returned. */
async function waitReturnedAt(
  store: PostgresStore,
  untilMs: number,
  during: () => Promise<unknown> = async () => {},
  since?: number,
): Promise<number> {
  const waiting = store.waitForWork(untilMs, new AbortController().signal, since);
  await during();
  await waiting;
  return Date.now();
}

describe('PostgresStore.waitForWork', () => {
  it('wakes when another store commits due work, long before its deadline', async () => {
    const { sleeper, writer, close } = await pair('wake_a');
    try {
      const until = farDeadline();
      expect(await waitReturnedAt(sleeper, until, () => writer.createRun(run('r1')))).toBeLessThan(
        wokenBy(until),
      );
    } finally {
      await close();
    }
  });

  it('sleeps to its deadline when nothing is notified, and returns at once when aborted', async () => {
    const { sleeper, close } = await pair('wake_b');
    try {
      // Not before the deadline (a timer may fire a millisecond early); nothing else ends this wait
      // within the test's timeout, the safety poll being 10 minutes away.
      const until = Date.now() + 400;
      expect(await waitReturnedAt(sleeper, until)).toBeGreaterThanOrEqual(until - 10);
      const abort = new AbortController();
      const abortUntil = farDeadline();
      const waiting = sleeper.waitForWork(abortUntil, abort.signal);
      abort.abort(); // the wait has begun: it is sleeping, not refusing an aborted signal up front
      await waiting;
      expect(Date.now()).toBeLessThan(wokenBy(abortUntil));
    } finally {
      await close();
    }
  });

  it('a reader that looked after work was announced (`since`) is not woken by it again; a worker is', async () => {
    const { sleeper, writer, close } = await pair('wake_e');
    try {
      // Announced and never claimed: no cycle of the sleeper's marks it seen.
      const first = farDeadline();
      expect(await waitReturnedAt(sleeper, first, () => writer.createRun(run('r1')))).toBeLessThan(
        wokenBy(first),
      );
      const lookedAt = Date.now();
      // A worker (no `since`) is told at once: the work is due and it has not cycled since.
      const worker = farDeadline();
      expect(await waitReturnedAt(sleeper, worker)).toBeLessThan(wokenBy(worker));
      // A reader that looked after the announcement sleeps to its deadline (no loop on what it saw).
      const until = Date.now() + 400;
      expect(await waitReturnedAt(sleeper, until, async () => {}, lookedAt)).toBeGreaterThanOrEqual(
        until - 10,
      );
      // A new announcement still wakes it.
      const later = farDeadline();
      const at = await waitReturnedAt(sleeper, later, () => writer.createRun(run('r2')), lookedAt);
      expect(at).toBeLessThan(wokenBy(later));
    } finally {
      await close();
    }
  });

  it('wakes at the due time a notification announces, not before', async () => {
    const { sleeper, writer, close } = await pair('wake_c');
    try {
      // A run created with its first step due 700 ms from now (the NOTIFY payload is that time).
      const dueAt = Date.now() + 700;
      const until = farDeadline();
      const at = await waitReturnedAt(sleeper, until, () => writer.createRun(run('r1', dueAt)));
      expect(at).toBeGreaterThanOrEqual(dueAt - 10);
      expect(at).toBeLessThan(wokenBy(until));
    } finally {
      await close();
    }
  });

  it('listens again after its connection is terminated, and wakes the waiter on reconnecting', async () => {
    const { sleeper, writer, close } = await pair('wake_d');
    try {
      const kill = () =>
        pgc.admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'wake_d' AND query LIKE 'LISTEN %'",
        );
      // Terminated while waiting: the waiter is woken (notifications may have been missed).
      const until = farDeadline();
      expect(await waitReturnedAt(sleeper, until, kill)).toBeLessThan(wokenBy(until));
      await expect
        .poll(
          async () =>
            (
              await pgc.admin.query(
                "SELECT 1 FROM pg_stat_activity WHERE application_name = 'wake_d' AND query LIKE 'LISTEN %'",
              )
            ).rowCount,
          { timeout: 20_000 },
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
      const againUntil = farDeadline();
      expect(await waitReturnedAt(sleeper, againUntil, () => writer.createRun(run('r2')))).toBeLessThan(
        wokenBy(againUntil),
      );
    } finally {
      await close();
    }
  });
});
