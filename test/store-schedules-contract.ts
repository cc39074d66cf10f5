import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { type ScheduleRules, SLOT_RUNS_PER_CYCLE } from '../src/core/schedule/schedule-rules.js';
import type { Completion, Store } from '../src/store/store.js';
import type { StoreHarness } from './store-contract.js';

/**
 * Schedules on every store: stored with their plan snapshot, ticked by `cycle` in its transaction
 * (one run per slot, id `<name>-<slot in UTC>`, also with two handles cycling at once), daylight
 * saving through the cron library, overlap (skip, queue, allow), catch-up and missed slots,
 * pause, resume, trigger and remove, and `nextWakeAt` waking for the next slot. Time is injected.
 * Noun: `ScheduleStore` (src/store/contract/schedules.ts).
 */
const random = () => 0;
const plan = validatePlanObject({ name: 'report', steps: [{ id: 'fetch', fn: 'noop' }] }, 'schedules');
const T0 = Date.parse('2026-12-03T00:00:00Z');
const MIN = 60_000;
const codeOf = (error: unknown) => (isBatonError(error) ? error.code : String(error));

function rules(partial: Partial<ScheduleRules>): ScheduleRules {
  return {
    timing: { everyMs: MIN },
    overlap: 'skip',
    catchUpMs: 3_600_000,
    startAt: null,
    endAt: null,
    ...partial,
  };
}

export function describeSchedulesContract(name: string, makeHarness: () => StoreHarness): void {
  describe(`Store schedules contract: ${name}`, () => {
    let harness: StoreHarness;
    let store: Store;
    beforeEach(async () => {
      harness = makeHarness();
      store = await harness.open();
    });
    afterEach(async () => {
      await store.close();
      await harness.cleanup();
    });

    const add = (scheduleName: string, partial: Partial<ScheduleRules>, now = T0) =>
      store.addSchedule({
        name: scheduleName,
        plan,
        planHash: 'h',
        inputs: {},
        workspace: '/ws',
        rules: rules(partial),
        now,
      });
    const cycle = (now: number, on: Store = store, completions: Completion[] = [], claimLimit = 0) =>
      on.cycle({ owner: 'w1', now, leaseMs: 10 * 3_600_000, completions, claimLimit, random });
    const runIds = async () => (await store.listRuns({ limit: 1000 })).map((r) => r.id).sort();
    const slots = async (scheduleName: string) =>
      (await store.listScheduleSlots(scheduleName, 100)).map((s) => [
        new Date(s.slotAt).toISOString(),
        s.outcome,
        s.runId,
        s.count,
      ]);

    it('stores a schedule with its plan snapshot and refuses a second one of the same name', async () => {
      // Added at 07:00 in Shanghai: the first slot is 08:00 there, midnight in UTC.
      const added = await add(
        'daily',
        { timing: { cron: '0 8 * * *', tz: 'Asia/Shanghai' } },
        T0 - 3_600_000,
      );
      expect(added).toMatchObject({ name: 'daily', planName: 'report', paused: false, lastRun: null });
      expect(new Date(added.nextFireAt!).toISOString()).toBe('2026-12-03T00:00:00.000Z');
      expect(codeOf(await add('daily', {}).catch((e) => e))).toBe('SCHEDULE_EXISTS');
      const stored = await store.getSchedule('daily');
      expect(stored?.plan.steps.map((s) => s.id)).toEqual(['fetch']);
      expect(stored?.rules.timing).toEqual({ cron: '0 8 * * *', tz: 'Asia/Shanghai' });
      expect((await store.listSchedules()).map((s) => s.name)).toEqual(['daily']);
    });

    it('starts one run per slot, named by the slot in UTC, and claims its first step in the next cycle', async () => {
      await add('tick', { timing: { everyMs: 1000 }, overlap: 'allow' });
      expect(await store.nextWakeAt()).toBe(T0 + 1000);
      const first = await cycle(T0 + 2500);
      expect(first.settledUnclaimed).toBe(true);
      expect(await runIds()).toEqual(['tick-20261203T000001Z', 'tick-20261203T000002Z']);
      await cycle(T0 + 2500);
      await cycle(T0 + 2999);
      expect(await runIds()).toHaveLength(2);
      const claimed = await cycle(T0 + 3000, store, [], 10);
      expect(claimed.claimed.map((c) => c.runId).sort()).toEqual([
        'tick-20261203T000001Z',
        'tick-20261203T000002Z',
      ]);
      expect(await runIds()).toHaveLength(3);
      expect((await store.scheduleSlotOfRun('tick-20261203T000002Z'))?.slotAt).toBe(T0 + 2000);
      expect(await store.scheduleSlotOfRun('nope')).toBeNull();
      expect(await store.nextWakeAt()).toBeLessThanOrEqual(T0 + 4000);
    });

    it('decides each slot once with two handles cycling the same times', async () => {
      await add('tick', { timing: { everyMs: 1000 }, overlap: 'allow' });
      const other = await harness.reopen();
      try {
        for (let t = T0 + 700; t < T0 + 30_000; t += 700) {
          await Promise.all([cycle(t, store), cycle(t, other), cycle(t + 300, other)]);
        }
        await Promise.all([cycle(T0 + 30_000, store), cycle(T0 + 30_000, other)]);
      } finally {
        await other.close();
      }
      const ids = await runIds();
      expect(ids).toHaveLength(30);
      expect(new Set(ids).size).toBe(30);
      const history = await store.listScheduleSlots('tick', 100);
      expect(history.filter((s) => s.outcome === 'started')).toHaveLength(30);
    });

    it('fires a Europe/Berlin 02:30 slot once on each daylight-saving day', async () => {
      const from = Date.parse('2026-03-27T12:00:00Z');
      await add('berlin', { timing: { cron: '30 2 * * *', tz: 'Europe/Berlin' }, overlap: 'allow' }, from);
      for (let t = from; t <= from + 4 * 86_400_000; t += 10 * MIN) await cycle(t);
      const autumn = Date.parse('2026-10-23T12:00:00Z');
      await store.replaceSchedule({
        name: 'berlin',
        plan,
        planHash: 'h',
        inputs: {},
        workspace: '/ws',
        rules: rules({ timing: { cron: '30 2 * * *', tz: 'Europe/Berlin' }, overlap: 'allow' }),
        now: autumn,
      });
      for (let t = autumn; t <= autumn + 4 * 86_400_000; t += 10 * MIN) await cycle(t);
      expect(await runIds()).toEqual([
        'berlin-20260328T013000Z',
        // 29 March: 02:30 does not exist; it fires once, at 03:00 CEST.
        'berlin-20260329T010000Z',
        'berlin-20260330T003000Z',
        'berlin-20260331T003000Z',
        'berlin-20261024T003000Z',
        // 25 October: 02:30 comes twice; it fires once, at the first (CEST).
        'berlin-20261025T003000Z',
        'berlin-20261026T013000Z',
        'berlin-20261027T013000Z',
      ]);
    });

    it('records a slot skipped while the previous run is still going (overlap skip)', async () => {
      await add('skip', {});
      await cycle(T0 + MIN);
      await cycle(T0 + 2 * MIN);
      expect(await runIds()).toEqual(['skip-20261203T000100Z']);
      const [skipped] = await store.listScheduleSlots('skip', 1);
      expect(skipped).toMatchObject({ outcome: 'skipped', slotAt: T0 + 2 * MIN, runId: null });
      expect(skipped?.reason).toContain('skip-20261203T000100Z');
    });

    it('starts a queued slot when the previous run ends (overlap queue), and skips slots beyond one', async () => {
      await add('q', { overlap: 'queue' });
      await cycle(T0 + MIN);
      const claim = (await cycle(T0 + MIN + 1, store, [], 1)).claimed[0]!;
      await cycle(T0 + 2 * MIN);
      await cycle(T0 + 3 * MIN);
      expect(await slots('q')).toEqual([
        ['2026-12-03T00:03:00.000Z', 'skipped', null, 1],
        ['2026-12-03T00:02:00.000Z', 'queued', null, 1],
        ['2026-12-03T00:01:00.000Z', 'started', 'q-20261203T000100Z', 1],
      ]);
      const done: Completion = {
        runId: claim.runId,
        stepId: claim.stepId,
        attempt: claim.attempt,
        owner: 'w1',
        outcome: { ok: true, summary: 'ok', outputs: [] },
        startedAt: T0 + MIN + 1,
        endedAt: T0 + 3 * MIN + 10,
        logPath: null,
      };
      await cycle(T0 + 3 * MIN + 10, store, [done]);
      await cycle(T0 + 3 * MIN + 20);
      expect(await runIds()).toEqual(['q-20261203T000100Z', 'q-20261203T000200Z']);
      expect((await store.getSchedule('q'))?.queuedSlotAt).toBeNull();
    });

    it('after an outage starts the slots of the catch-up window and records the older ones as missed', async () => {
      await add('outage', { overlap: 'allow', catchUpMs: 5 * MIN });
      await cycle(T0 + 10 * MIN);
      expect(await runIds()).toEqual(
        [6, 7, 8, 9, 10].map((m) => `outage-20261203T00${String(m).padStart(2, '0')}00Z`),
      );
      const missed = (await store.listScheduleSlots('outage', 100)).find((s) => s.outcome === 'missed');
      expect(missed).toMatchObject({ slotAt: T0 + MIN, lastSlotAt: T0 + 5 * MIN, count: 5 });
      expect(missed?.reason).toContain('catch-up window');
    });

    it('with catch-up none starts only the latest due slot; at most 10 slots start at once', async () => {
      await add('none', { overlap: 'allow', catchUpMs: null });
      await add('many', { overlap: 'allow', timing: { everyMs: 1000 } });
      await cycle(T0 + 10 * MIN);
      const ids = await runIds();
      expect(ids.filter((id) => id.startsWith('none-'))).toEqual(['none-20261203T001000Z']);
      expect(ids.filter((id) => id.startsWith('many-'))).toHaveLength(10);
      const many = await store.listScheduleSlots('many', 100);
      expect(many.find((s) => s.outcome === 'missed')).toMatchObject({ count: 590 });
    });

    it('a cycle starts at most SLOT_RUNS_PER_CYCLE runs of schedules; the next cycle starts the rest', async () => {
      // 60 schedules with two due slots each: 120 runs, more than one cycle starts.
      for (let i = 0; i < 60; i++) await add(`s${i}`, { overlap: 'allow' });
      const first = await cycle(T0 + 2 * MIN);
      expect(first).toMatchObject({ slotRunsStarted: SLOT_RUNS_PER_CYCLE, settledUnclaimed: true });
      expect(first.slotsLeft).toBeUndefined();
      const second = await cycle(T0 + 2 * MIN);
      expect(second).toMatchObject({ slotRunsStarted: 120 - SLOT_RUNS_PER_CYCLE });
      expect(await runIds()).toHaveLength(120);
    });

    it("a check's cycle decides the slots due by its start, and starts only the runs it has left, a schedule whole", async () => {
      await add('a', { overlap: 'allow' });
      await add('b', { overlap: 'allow', timing: { everyMs: 2 * MIN } });
      const check = (now: number, dueBy: number, slotRunsLeft: number) =>
        store.cycle({
          owner: 'w1',
          now,
          leaseMs: MIN,
          completions: [],
          claimLimit: 0,
          random,
          dueBy,
          slotRunsLeft,
        });
      // A check that started at minute 3 cycles at minute 5: a's slots 1..3 fit its 3 runs left, b's
      // slot 2 does not, and stays due; the slots after its start are not decided.
      const first = await check(T0 + 5 * MIN, T0 + 3 * MIN, 3);
      expect(first).toMatchObject({ slotRunsStarted: 3, slotsLeft: true });
      expect(await runIds()).toEqual([1, 2, 3].map((m) => `a-20261203T00${String(m).padStart(2, '0')}00Z`));
      expect((await store.getSchedule('b'))?.nextFireAt).toBe(T0 + 2 * MIN);
      // The next check takes the rest, up to its own start.
      const second = await check(T0 + 5 * MIN + 1000, T0 + 5 * MIN, 200);
      expect(second).toMatchObject({ slotRunsStarted: 4 });
      expect(second.slotsLeft).toBeUndefined();
      expect((await runIds()).filter((id) => id.startsWith('b-'))).toEqual([
        'b-20261203T000200Z',
        'b-20261203T000400Z',
      ]);
      expect(await runIds()).toHaveLength(7);
    });

    it('skips a slot whose run id a run made by hand took, and goes on', async () => {
      await add('x', { overlap: 'allow' });
      await store.createRun({
        id: 'x-20261203T000100Z',
        plan,
        planHash: 'h',
        inputs: {},
        workspace: '/ws',
        now: T0,
      });
      await cycle(T0 + 2 * MIN);
      expect(await runIds()).toEqual(['x-20261203T000100Z', 'x-20261203T000200Z']);
      const [, first] = await store.listScheduleSlots('x', 10);
      expect(first).toMatchObject({ outcome: 'skipped', slotAt: T0 + MIN, runId: null });
      expect(first?.reason).toContain('already exists');
    });

    it('pauses, resumes from now, triggers by hand and removes', async () => {
      await add('p', {});
      await store.pauseSchedule('p', T0);
      expect((await store.getSchedule('p'))?.nextFireAt).toBeNull();
      expect(await store.nextWakeAt()).toBeNull();
      await cycle(T0 + 5 * MIN);
      expect(await runIds()).toEqual([]);
      const resumed = await store.resumeSchedule('p', T0 + 5 * MIN + 30_000);
      expect(resumed.nextFireAt).toBe(T0 + 6 * MIN);
      const run = await store.triggerSchedule('p', T0 + 5 * MIN + 40_000);
      expect(run.id).toBe('p-20261203T000540Z-manual');
      expect(codeOf(await store.triggerSchedule('p', T0 + 5 * MIN + 40_100).catch((e) => e))).toBe(
        'INVALID_ARGUMENT',
      );
      expect((await store.getSchedule('p'))?.lastRun).toEqual({ id: run.id, status: 'running' });
      expect((await store.scheduleSlotOfRun(run.id))?.manual).toBe(true);
      expect(codeOf(await store.pauseSchedule('nope', T0).catch((e) => e))).toBe('SCHEDULE_NOT_FOUND');
      expect(await store.removeSchedule('p')).toBe(true);
      expect(await store.removeSchedule('p')).toBe(false);
      expect(await store.listSchedules()).toEqual([]);
      expect(await store.getRun(run.id)).not.toBeNull();
    });

    it('adds a schedule paused in the same write, and a replacement may pause it again', async () => {
      const added = await store.addSchedule({
        name: 'held',
        plan,
        planHash: 'h',
        inputs: {},
        workspace: '/ws',
        rules: rules({}),
        now: T0,
        paused: true,
      });
      expect(added).toMatchObject({ paused: true, nextFireAt: null });
      expect(await store.nextWakeAt()).toBeNull();
      await cycle(T0 + 5 * MIN);
      expect(await runIds()).toEqual([]);
      expect(await store.listScheduleSlots('held')).toEqual([]);
      const resumed = await store.resumeSchedule('held', T0 + 5 * MIN + 30_000);
      expect(resumed).toMatchObject({ paused: false, nextFireAt: T0 + 6 * MIN });
      // A replacement without `paused` keeps the state; with it, the schedule is paused again.
      const stored = (await store.getSchedule('held'))!;
      const spec = { ...stored, planHash: 'h2', now: T0 + 5 * MIN + 40_000 };
      delete (spec as { paused?: boolean }).paused;
      expect(await store.replaceSchedule(spec)).toMatchObject({ paused: false, nextFireAt: T0 + 6 * MIN });
      expect(await store.replaceSchedule({ ...spec, planHash: 'h3', paused: true })).toMatchObject({
        paused: true,
        nextFireAt: null,
      });
      await cycle(T0 + 10 * MIN);
      expect(await runIds()).toEqual([]);
    });
  });
}
