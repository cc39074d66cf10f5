import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { Plan } from '../src/core/plan/types.js';
import type { StepResult } from '../src/core/run-state.js';
import type { ClaimedStep, Completion, Store } from '../src/store/store.js';
import type { StoreHarness } from './store-contract.js';

/**
 * A fan-out (`forEach`), on every store: the group expands into item steps `<id>[i]` when claimed
 * (one transaction), items run under the group's concurrency, the group's result is the item results
 * in item order, tolerated failures let it succeed, and too many items block it `invalid`. Noun:
 * `ClaimStore` (src/store/contract/claims.ts).
 */

function summarisePlan(forEach: Record<string, unknown>): Plan {
  return validatePlanObject(
    {
      name: 'summarise-pages',
      limits: { concurrency: 20, maxSteps: 500 },
      defaults: { retry: { maxAttempts: 1 } },
      steps: [
        { id: 'research', fn: 'research' },
        {
          id: 'summarise',
          fn: 'summarise',
          dependsOn: ['research'],
          forEach: { items: 'steps.research.result.pages', as: 'page', ...forEach },
        },
        { id: 'report', fn: 'report', dependsOn: ['summarise'] },
      ],
    },
    'pages.json',
  );
}

export function describeForEachContract(name: string, makeHarness: () => StoreHarness): void {
  describe(`Store contract, forEach: ${name}`, () => {
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

    interface Ran {
      stepId: string;
      item: unknown;
      runningAtOnce: number;
    }

    /**
     * Runs the run to the end: research returns `pages`; an item succeeds with the upper-cased page
     * unless `fails` has its index; report records what it read. Claims finish one cycle later, so
     * several items run at once.
     */
    async function runToEnd(
      pages: unknown[],
      fails: ReadonlySet<number> = new Set(),
      startAt = 2000,
    ): Promise<Ran[]> {
      const ran: Ran[] = [];
      let now = startAt;
      let running: ClaimedStep[] = [];
      for (let cycle = 0; cycle < 400; cycle++) {
        const completions: Completion[] = running.slice(0, 3).map((claim) => {
          const index = claim.step.forEachItem?.index;
          const failed = index !== undefined && fails.has(index);
          return {
            runId: claim.runId,
            stepId: claim.stepId,
            attempt: claim.attempt,
            owner: 'w1',
            outcome: failed
              ? { ok: false, failureClass: 'agent_failed', message: `page ${index} unreadable` }
              : {
                  ok: true,
                  summary: `${claim.stepId} done`,
                  outputs: [],
                  value:
                    claim.stepId === 'research'
                      ? { pages }
                      : String(claim.step.forEachItem?.value ?? claim.stepId).toUpperCase(),
                },
            startedAt: now - 5,
            endedAt: now,
            logPath: null,
          };
        });
        running = running.slice(3);
        const result = await store.cycle({
          owner: 'w1',
          now,
          leaseMs: 1_000_000,
          completions,
          claimLimit: 10,
          random: () => 0,
        });
        now += 10;
        running.push(...result.claimed);
        for (const claim of result.claimed) {
          ran.push({
            stepId: claim.stepId,
            item: claim.step.forEachItem?.value,
            runningAtOnce: running.length,
          });
        }
        const run = await store.getRun('run1');
        if (run?.status !== 'running' && running.length === 0) break;
      }
      return ran;
    }

    const create = (plan: Plan) =>
      store.createRun({ id: 'run1', plan, planHash: 'h', inputs: {}, workspace: '/ws', now: 1000 });

    async function groupResult(): Promise<StepResult | undefined> {
      return (await store.getStepResults('run1', ['summarise'])).summarise;
    }

    it('expands into one item per page, caps running items at its concurrency, and keeps item order in its result', async () => {
      const pages = Array.from({ length: 12 }, (_, i) => `page-${i}`);
      await create(summarisePlan({ maxItems: 40, concurrency: 4 }));
      const ran = await runToEnd(pages);
      const items = ran.filter((r) => r.stepId.startsWith('summarise['));
      // Each item once, as <id>[i], carrying its element.
      expect(items.map((r) => r.stepId).sort()).toEqual(pages.map((_, i) => `summarise[${i}]`).sort());
      expect(items.map((r) => r.item).sort()).toEqual([...pages].sort());
      // Never more than 4 items running (report and research never overlap them).
      expect(Math.max(...items.map((r) => r.runningAtOnce))).toBeLessThanOrEqual(4);
      expect(Math.max(...items.map((r) => r.runningAtOnce))).toBe(4);
      expect(ran[ran.length - 1]!.stepId).toBe('report');
      const run = await store.getRun('run1');
      expect(run?.status).toBe('succeeded');
      expect((await groupResult())?.value).toEqual(pages.map((page) => page.toUpperCase()));
      const events = await store.getEvents('run1');
      expect(events.filter((e) => e.type === 'step.expanded')).toMatchObject([
        { stepId: 'summarise', items: 12 },
      ]);
    });

    it('succeeds with the failed items recorded when no more than toleratedFailures fail', async () => {
      const pages = Array.from({ length: 50 }, (_, i) => `p${i}`);
      await create(summarisePlan({ maxItems: 50, toleratedFailures: 5 }));
      await runToEnd(pages, new Set([3, 17, 41]));
      expect((await store.getRun('run1'))?.status).toBe('succeeded');
      const result = await groupResult();
      expect((result?.value as unknown[]).length).toBe(50);
      expect((result?.value as unknown[])[3]).toBeNull();
      expect((result?.value as unknown[])[4]).toBe('P4');
      expect(result?.failedItems?.map((f) => f.item)).toEqual([3, 17, 41]);
      expect(result?.failedItems?.[0]?.error).toContain('page 3 unreadable');
    });

    it('blocks the group with the list of failed items beyond toleratedFailures (a percentage)', async () => {
      const pages = Array.from({ length: 10 }, (_, i) => `p${i}`);
      await create(summarisePlan({ maxItems: 10, toleratedFailures: '10%' }));
      const ran = await runToEnd(pages, new Set([2, 7]));
      expect(ran.map((r) => r.stepId)).not.toContain('report');
      const run = await store.getRun('run1');
      expect(run?.status).toBe('blocked');
      const group = run?.steps.find((s) => s.stepId === 'summarise');
      expect(group?.status).toBe('blocked');
      expect(group?.blockedReason).toContain('2 of 10 items failed');
      expect(group?.blockedReason).toContain('[2] ');
      expect(group?.blockedReason).toContain('[7] ');
    });

    it('runs the failed items again when a human retries the blocked group; then the steps after it go on', async () => {
      const pages = ['a', 'b', 'c', 'd'];
      await create(summarisePlan({ maxItems: 10 }));
      await runToEnd(pages, new Set([1]));
      expect((await store.getRun('run1'))?.status).toBe('blocked');
      await store.retryStep('run1', 'summarise', 100_000);
      const ran = await runToEnd(pages, new Set(), 100_000);
      // Only the failed item ran again, then report.
      expect(ran.map((r) => r.stepId)).toEqual(['summarise[1]', 'report']);
      expect((await store.getRun('run1'))?.status).toBe('succeeded');
      expect((await groupResult())?.value).toEqual(['A', 'B', 'C', 'D']);
    });

    it('tells the worker that an expansion made work due (settledUnclaimed), so it cycles again at once', async () => {
      await create(summarisePlan({ maxItems: 10 }));
      const cycle = (now: number, completions: Completion[], claimLimit: number) =>
        store.cycle({ owner: 'w1', now, leaseMs: 10_000, completions, claimLimit, random: () => 0 });
      const [research] = (await cycle(2000, [], 1)).claimed;
      const done: Completion = {
        runId: 'run1',
        stepId: 'research',
        attempt: research!.attempt,
        owner: 'w1',
        outcome: { ok: true, summary: 'found', outputs: [], value: { pages: ['a', 'b'] } },
        startedAt: 2001,
        endedAt: 2002,
        logPath: null,
      };
      expect((await cycle(2010, [done], 0)).claimed).toEqual([]);
      const expansion = await cycle(2020, [], 1);
      expect(expansion.settledUnclaimed).toBe(true);
      const run = await store.getRun('run1');
      expect(run?.steps.map((s) => [s.stepId, s.status])).toEqual([
        ['research', 'succeeded'],
        ['summarise', 'pending'],
        ['report', 'pending'],
        ['summarise[0]', expansion.claimed.length > 0 ? 'running' : 'ready'],
        ['summarise[1]', 'ready'],
      ]);
    });

    it('blocks the group invalid with the count when the list has more than maxItems, creating no item', async () => {
      await create(summarisePlan({ maxItems: 3 }));
      const ran = await runToEnd(['a', 'b', 'c', 'd', 'e']);
      expect(ran.map((r) => r.stepId)).toEqual(['research']);
      const run = await store.getRun('run1');
      const group = run?.steps.find((s) => s.stepId === 'summarise');
      expect(group).toMatchObject({ status: 'blocked', lastFailureClass: 'invalid' });
      expect(group?.blockedReason).toContain('gave 5 items, more than maxItems 3');
      expect(run?.steps.map((s) => s.stepId)).toEqual(['research', 'summarise', 'report']);
    });

    it('succeeds at once with an empty list when there is nothing to fan out over', async () => {
      await create(summarisePlan({ maxItems: 3 }));
      const ran = await runToEnd([]);
      expect(ran.map((r) => r.stepId)).toEqual(['research', 'report']);
      expect((await groupResult())?.value).toEqual([]);
    });
  });
}
