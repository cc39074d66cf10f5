/**
 * Schedules ticked by real processes on an injected clock, under SIGKILL: three `baton check`
 * loops on SQLite, and two PostgreSQL workers with a check loop, drive an every-second schedule
 * through a minute of injected time (test/fixtures/schedule-ticker.mjs: the engine of check and
 * worker, its `now` read from a file the test advances), while the test kills one at random and
 * starts it again. Each slot starts exactly one run (`tick-<slot in UTC>`), recorded once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { slotRunId } from '../src/core/schedule/schedule-rules.js';
import { databasePath } from '../src/runtime/home.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { fixture, removeTempDirs, tempDir, waitFor } from './helpers/cli.js';
import { freshSchemaName, usePostgres } from './helpers/postgres.js';

afterAll(() => removeTempDirs());

const T0 = Date.parse('2026-12-03T00:00:00Z');
const SLOTS = 60;
const plan = validatePlanObject({ name: 'tick', steps: [{ id: 'work', fn: 'noop' }] }, 'tick');

interface Ticker {
  mode: 'check' | 'worker';
  child: ChildProcess;
}

/** A minute of injected time, one second at a time, with one random SIGKILL (and restart) per slot. */
async function driveMinute(
  store: Store,
  dir: string,
  modes: readonly ('check' | 'worker')[],
  extra: string[],
): Promise<void> {
  const clock = join(dir, 'clock');
  const ledger = join(dir, 'ledger');
  writeFileSync(clock, String(T0));
  writeFileSync(ledger, '');
  await store.addSchedule({
    name: 'tick',
    plan,
    planHash: 'h',
    inputs: {},
    workspace: dir,
    rules: {
      timing: { everyMs: 1000 },
      overlap: 'allow',
      catchUpMs: 3_600_000,
      startAt: null,
      endAt: T0 + SLOTS * 1000,
    },
    now: T0,
  });
  const start = (mode: 'check' | 'worker'): Ticker => ({
    mode,
    child: spawn(
      process.execPath,
      [
        fixture('schedule-ticker'),
        '--home',
        dir,
        '--clock',
        clock,
        '--ledger',
        ledger,
        '--mode',
        mode,
        ...extra,
      ],
      { stdio: 'ignore' },
    ),
  });
  const tickers = modes.map(start);
  let kills = 0;
  try {
    for (let slot = 1; slot <= SLOTS; slot++) {
      writeFileSync(clock, String(T0 + slot * 1000));
      if (slot % 3 === 0) {
        const victim = Math.floor(Math.random() * tickers.length);
        tickers[victim]!.child.kill('SIGKILL');
        kills++;
        tickers[victim] = start(tickers[victim]!.mode);
      }
      const id = slotRunId('tick', T0 + slot * 1000);
      await waitFor(
        async () => (await store.getRunSteps(id, { statuses: [], everyStepUpTo: 0 })) !== null,
        30_000,
        id,
      );
    }
    // Leases of killed processes run out in injected time: move the clock on until every run is done.
    let t = T0 + SLOTS * 1000;
    await waitFor(
      async () => {
        const runs = await store.listRuns({ limit: 1000 });
        if (runs.every((run) => run.status === 'succeeded')) return true;
        // The schedule ends with the minute (endAt): no slot comes after it.
        t += 500;
        writeFileSync(clock, String(t));
        return false;
      },
      60_000,
      'every run succeeded',
      100,
    );
  } finally {
    writeFileSync(`${clock}.stop`, '');
    for (const ticker of tickers) ticker.child.kill('SIGKILL');
  }
  expect(kills).toBe(SLOTS / 3);
}

/** Each slot of the minute started exactly one run, and its history says so once. */
async function expectOneRunPerSlot(store: Store): Promise<void> {
  const ids = (await store.listRuns({ limit: 1000 })).map((run) => run.id);
  const expected = Array.from({ length: SLOTS }, (_, i) => slotRunId('tick', T0 + (i + 1) * 1000));
  for (const id of expected) expect(ids.filter((x) => x === id)).toHaveLength(1);
  const history = await store.listScheduleSlots('tick', 1000);
  const started = history.filter((slot) => slot.outcome === 'started' && slot.slotAt <= T0 + SLOTS * 1000);
  expect(started.map((slot) => slot.runId).sort()).toEqual(expected);
  expect(history.filter((slot) => slot.outcome !== 'started')).toEqual([]);
}

describe('schedules under SIGKILL on an injected clock', () => {
  it('three check loops on SQLite start exactly one run per slot', async () => {
    const dir = tempDir('baton-sched-crash-');
    const store = SqliteStore.open(databasePath(dir));
    try {
      await driveMinute(store, dir, ['check', 'check', 'check'], []);
      await expectOneRunPerSlot(store);
      const ledger = readFileSync(join(dir, 'ledger'), 'utf8').trim().split('\n');
      // Every run's step ran at least once (a kill in flight may run it again: retried, not a new run).
      expect(new Set(ledger.map((line) => line.split(' ')[0])).size).toBeGreaterThanOrEqual(SLOTS);
    } finally {
      await store.close();
    }
  }, 240_000);

  describe('PostgreSQL', () => {
    const pg = usePostgres();
    it('two workers and a check loop start exactly one run per slot', async () => {
      const dir = tempDir('baton-sched-pg-');
      const schema = freshSchemaName('sched');
      const store = await PostgresStore.open(pg.server.url, { schema });
      try {
        await driveMinute(
          store,
          dir,
          ['worker', 'worker', 'check'],
          ['--store', pg.server.url, '--schema', schema],
        );
        await expectOneRunPerSlot(store);
      } finally {
        await store.close();
      }
    }, 240_000);
  });
});
