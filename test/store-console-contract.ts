import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Completion, Store } from '../src/store/store.js';
import { chainPlan, diamondPlan, type StoreHarness } from './store-contract.js';

const random = () => 0;

/**
 * The reads `baton serve` is made of, as every store answers them: a filtered, paginated run list
 * with counts per status, the blocked steps across runs, the live leases with their owners, and the
 * event log of every run after a position. Nouns: `OverviewStore` (src/store/contract/overview.ts)
 * and `EventStore.listEventsAfter`.
 */
export function describeConsoleReadsContract(name: string, makeHarness: () => StoreHarness): void {
  describe(`Store console reads: ${name}`, () => {
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

    const create = (id: string, plan = chainPlan(2), now = 1000) =>
      store.createRun({ id, plan, planHash: 'h', inputs: {}, workspace: '/ws', now });
    const failed = (c: { runId: string; stepId: string; attempt: number }, now: number): Completion => ({
      ...c,
      owner: 'w1',
      outcome: { ok: false, failureClass: 'fatal', message: 'permission denied' },
      startedAt: now - 1,
      endedAt: now,
      logPath: null,
    });

    it('pages runs newest first with counts per status, filtered by status, plan, time and id', async () => {
      for (let i = 0; i < 7; i++) await create(`run-${i}`, chainPlan(2), 1000 + i);
      await create('other-a', diamondPlan(), 2000);
      await create('other-b', diamondPlan(), 2001);
      await store.cancelRun('run-1', 3000);
      await store.cancelRun('other-a', 3000);

      const first = await store.listRunPage({ limit: 4 });
      expect(first.runs.map((r) => r.id)).toEqual(['other-b', 'other-a', 'run-6', 'run-5']);
      expect(first.counts).toEqual({ running: 7, cancelled: 2 });
      expect(first.total).toBe(9);
      expect(first.runs[0]).toMatchObject({ planName: 'diamond', stepCounts: { ready: 1, pending: 4 } });
      const third = await store.listRunPage({ limit: 4, offset: 8 });
      expect(third.runs.map((r) => r.id)).toEqual(['run-0']);

      const cancelled = await store.listRunPage({ status: 'cancelled' });
      expect(cancelled.runs.map((r) => r.id)).toEqual(['other-a', 'run-1']);
      // Counts are of the other filters: the status chips say what each status would show.
      expect(cancelled.counts).toEqual({ running: 7, cancelled: 2 });
      expect(cancelled.total).toBe(2);

      const chains = await store.listRunPage({ planName: 'chain', status: 'running' });
      expect(chains.runs.map((r) => r.id)).toEqual(['run-6', 'run-5', 'run-4', 'run-3', 'run-2', 'run-0']);
      expect(chains.counts).toEqual({ running: 6, cancelled: 1 });

      const window = await store.listRunPage({ createdFrom: 1002, createdBefore: 1005 });
      expect(window.runs.map((r) => r.id)).toEqual(['run-4', 'run-3', 'run-2']);
      const search = await store.listRunPage({ idContains: 'her-' });
      expect(search.runs.map((r) => r.id)).toEqual(['other-b', 'other-a']);
      // Text that means something to SQL patterns is taken literally.
      expect((await store.listRunPage({ idContains: '%' })).total).toBe(0);
      expect((await store.listRunPage({ idContains: '_' })).total).toBe(0);
      expect(await store.listRunPage({ planName: 'none' })).toEqual({ runs: [], counts: {}, total: 0 });
    });

    it('lists blocked steps of runs still going, newest first, with their reason and class', async () => {
      await create('a', chainPlan(1, { defaults: { retry: { maxAttempts: 1 } } }), 1000);
      await create('b', diamondPlan(), 1000);
      await create('c', chainPlan(1, { defaults: { retry: { maxAttempts: 1 } } }), 1000);
      const claimed = await store.cycle({
        owner: 'w1',
        now: 1000,
        leaseMs: 1000,
        completions: [],
        claimLimit: 10,
        random,
      });
      const of = (runId: string) => claimed.claimed.find((c) => c.runId === runId)!;
      await store.cycle({
        owner: 'w1',
        now: 1100,
        leaseMs: 1000,
        completions: [failed(of('a'), 1100)],
        claimLimit: 0,
        random,
      });
      await store.cycle({
        owner: 'w1',
        now: 1200,
        leaseMs: 1000,
        completions: [failed(of('c'), 1200)],
        claimLimit: 0,
        random,
      });
      const blocked = await store.listBlockedSteps();
      expect(blocked.map((b) => [b.runId, b.stepId])).toEqual([
        ['c', 's1'],
        ['a', 's1'],
      ]);
      expect(blocked[0]).toMatchObject({
        planName: 'chain',
        runStatus: 'blocked',
        attempt: 1,
        failureClass: 'fatal',
        blockedAt: 1200,
      });
      expect(blocked[0]?.reason).toContain('permission denied');
      // A cancelled run has nothing to unblock; a retried step is no longer blocked.
      await store.cancelRun('c', 1300);
      await store.retryStep('a', 's1', 1300);
      expect(await store.listBlockedSteps()).toEqual([]);
    });

    it('lists the leases held now with owner, expiry and process, and forgets finished ones', async () => {
      await create('a', diamondPlan(), 1000);
      await create('b', chainPlan(1), 1000);
      const first = await store.cycle({
        owner: 'w1',
        now: 1000,
        leaseMs: 5000,
        completions: [],
        claimLimit: 1,
        random,
      });
      await store.cycle({ owner: 'w2', now: 1001, leaseMs: 5000, completions: [], claimLimit: 1, random });
      await store.recordAttemptProcess(first.claimed[0]!, { pid: 4242, host: 'box' });
      const leases = await store.listLeases();
      expect(leases.map((l) => [l.owner, l.runId, l.stepId])).toEqual([
        ['w1', first.claimed[0]!.runId, first.claimed[0]!.stepId],
        ['w2', first.claimed[0]!.runId === 'a' ? 'b' : 'a', first.claimed[0]!.runId === 'a' ? 's1' : 'a'],
      ]);
      expect(leases[0]).toMatchObject({
        attempt: 1,
        leaseExpiresAt: 6000,
        startedAt: 1000,
        pid: 4242,
        host: 'box',
      });
      expect(leases[0]?.flowKey).toBe('fn:noop');
      await store.cancelRun('a', 1100);
      await store.cancelRun('b', 1100);
      expect(await store.listLeases()).toEqual([]);
    });

    it('reads the events of every run after a position, in order, up to a limit', async () => {
      expect(await store.lastEventSeq()).toBe(0);
      await create('a', chainPlan(1), 1000);
      await create('b', chainPlan(1), 1001);
      const all = await store.listEventsAfter(0);
      expect(all.map((e) => [e.runId, e.type])).toEqual([
        ['a', 'run.created'],
        ['b', 'run.created'],
      ]);
      await store.cancelRun('a', 1100);
      const after = await store.listEventsAfter(all[1]!.seq);
      expect(after.map((e) => e.runId)).toContain('a');
      expect(after.every((e) => e.seq > all[1]!.seq)).toBe(true);
      expect(after.map((e) => e.type)).toContain('run.cancelled');
      expect(await store.listEventsAfter(0, 1)).toHaveLength(1);
      const newest = await store.listEventsAfter(0);
      expect(await store.lastEventSeq()).toBe(newest[newest.length - 1]!.seq);
      expect(await store.listEventsAfter(await store.lastEventSeq())).toEqual([]);
    });
  });
}
