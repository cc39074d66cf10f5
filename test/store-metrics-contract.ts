import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Plan } from '../src/core/plan/types.js';
import { stallMessage } from '../src/core/stall-message.js';
import type { Completion, Store } from '../src/store/store.js';
import { chainPlan, type StoreHarness } from './store-contract.js';

const random = () => 0;

/**
 * `Store.metricsSnapshot`, what `/metrics` exports, as every store answers it: runs per status,
 * the steps of unfinished runs, due work and its oldest due time, expired leases, hook calls, and
 * the attempts ended (with leases reclaimed) in a range of the event log. Noun: `MetricsStore`
 * (src/store/contract/metrics.ts).
 */
export function describeMetricsContract(name: string, makeHarness: () => StoreHarness): void {
  describe(`Store metrics: ${name}`, () => {
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

    const create = (id: string, plan: Plan, now = 1000, awaitingApproval = false) =>
      store.createRun({ id, plan, planHash: 'h', inputs: {}, workspace: '/ws', now, awaitingApproval });
    const cycle = (now: number, completions: Completion[] = [], claimLimit = 10, runId?: string) =>
      store.cycle({ owner: 'w1', now, leaseMs: 1000, completions, claimLimit, random, runId });
    const ended = (
      c: { runId: string; stepId: string; attempt: number },
      now: number,
      outcome: Completion['outcome'],
    ): Completion => ({ ...c, owner: 'w1', outcome, startedAt: now - 1, endedAt: now, logPath: null });
    const ok = { ok: true as const, summary: 'fine', outputs: [] };
    const fatal = { ok: false as const, failureClass: 'fatal' as const, message: 'permission denied' };
    const noEvents = { afterSeq: 0, upToSeq: 0 };

    it('counts runs, the steps of unfinished runs, due work, leases and hook calls', async () => {
      const hooked = chainPlan(1, { hooks: [{ on: ['succeeded'], command: ['notify'], retries: 2 }] });
      await create('done', hooked);
      await create('blocked', chainPlan(2));
      await create('stalled', chainPlan(2));
      await create('cancelled', chainPlan(2));
      await create('proposed', chainPlan(2), 1000, true);
      const first = await cycle(1000, [], 10, 'done');
      await cycle(1001, [ended(first.claimed[0]!, 1001, ok)], 10, 'done');
      const blocked = await cycle(1002, [], 10, 'blocked');
      await cycle(1003, [ended(blocked.claimed[0]!, 1003, fatal)], 10, 'blocked');
      await cycle(1004, [], 10, 'stalled');
      await store.cancelRun('cancelled', 1005);
      await create('later', chainPlan(3), 1006);
      await create('due-a', chainPlan(1), 1500);
      await create('due-b', chainPlan(1), 1200);
      const [delivery] = await store.claimHookDeliveries('w1', 1010, 60_000, 10);
      await store.finishHookDelivery(delivery!, { ok: false, error: 'exit 1', retryAt: 1100 }, 1011);

      const at = await store.metricsSnapshot({ now: 1600, events: noEvents });
      expect(at.runs).toEqual({ succeeded: 1, blocked: 1, running: 4, cancelled: 1, awaiting_approval: 1 });
      // Steps of finished runs (done, cancelled) are history: not counted.
      expect(at.steps).toEqual({ blocked: 1, pending: 5, running: 1, ready: 4 });
      // Due at 1600: later (1006), due-a (1500), due-b (1200); the proposed run's steps wait for it.
      expect(at.dueSteps).toBe(3);
      expect(at.oldestDueAt).toBe(1006);
      // The stalled run's lease (claimed at 1004 for 1000 ms) has run out at 2004.
      expect(at.expiredLeases).toBe(0);
      expect((await store.metricsSnapshot({ now: 2004, events: noEvents })).expiredLeases).toBe(1);
      expect(at.hookDeliveries).toEqual({ pending: 0, retrying: 1, failed: 0 });
      expect(at.lastEventSeq).toBe(Math.max(...(await store.listEventsAfter(0, 1000)).map((e) => e.seq)));
      expect(at.attemptsEnded).toEqual([]);

      const before = await store.metricsSnapshot({ now: 900, events: noEvents });
      expect(before.dueSteps).toBe(0);
      expect(before.oldestDueAt).toBeNull();
      const [again] = await store.claimHookDeliveries('w1', 1100, 60_000, 10);
      await store.finishHookDelivery(again!, { ok: false, error: 'exit 1', retryAt: null }, 1101);
      const given = await store.metricsSnapshot({ now: 1600, events: noEvents });
      expect(given.hookDeliveries).toEqual({ pending: 0, retrying: 0, failed: 1 });
    });

    it('counts the attempts ended and the leases reclaimed in a range of the event log', async () => {
      const retried = chainPlan(1, {
        defaults: { retry: { maxAttempts: 3, initialDelayMs: 0, maxDelayMs: 0 } },
      });
      await create('a', retried);
      const start = await store.metricsSnapshot({ now: 1000, events: { afterSeq: 0, upToSeq: 0 } });
      const first = await cycle(1000, [], 10, 'a');
      // A transient failure of the stall watchdog's: counted apart too (baton_attempts_stalled_total).
      const transient = {
        ok: false as const,
        failureClass: 'transient' as const,
        message: `${stallMessage(600_000)}; every process of the attempt was stopped`,
      };
      const second = await cycle(1001, [ended(first.claimed[0]!, 1001, transient)], 10, 'a');
      // The second attempt's lease runs out: the next cycle reclaims it (interrupted).
      const third = await cycle(5000, [], 10, 'a');
      expect(third.reclaimed).toHaveLength(1);
      const claimed = third.claimed[0] ?? (await cycle(5001, [], 10, 'a')).claimed[0];
      expect(second.claimed).toHaveLength(1);
      await cycle(5002, [ended(claimed!, 5002, { ...ok, degraded: 'fallback model' })], 10, 'a');
      const end = await store.metricsSnapshot({ now: 6000, events: { afterSeq: 0, upToSeq: 0 } });
      const counted = await store.metricsSnapshot({
        now: 6000,
        events: { afterSeq: start.lastEventSeq, upToSeq: end.lastEventSeq },
      });
      const byOutcome = Object.fromEntries(
        counted.attemptsEnded.map((a) => [`${a.outcome}/${a.failureClass}`, a.count]),
      );
      expect(byOutcome).toEqual({ 'failed/transient': 1, 'failed/interrupted': 1, 'degraded/null': 1 });
      expect(counted.leasesReclaimed).toBe(1);
      expect(counted.attemptsStalled).toBe(1);
      // An empty or reversed range counts nothing.
      const none = await store.metricsSnapshot({
        now: 6000,
        events: { afterSeq: end.lastEventSeq, upToSeq: end.lastEventSeq },
      });
      expect(none.attemptsEnded).toEqual([]);
      expect(none.leasesReclaimed).toBe(0);
      expect(none.attemptsStalled).toBe(0);
      const tail = await store.metricsSnapshot({
        now: 6000,
        events: { afterSeq: start.lastEventSeq, upToSeq: start.lastEventSeq + 2 },
      });
      // run.created is before the range; the range holds step.started then step.failed (transient).
      expect(tail.attemptsEnded).toEqual([{ outcome: 'failed', failureClass: 'transient', count: 1 }]);
    });
  });
}
