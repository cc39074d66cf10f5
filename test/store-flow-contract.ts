import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { Plan } from '../src/core/plan/types.js';
import type { ClaimedStep, Completion, Store } from '../src/store/store.js';
import type { StoreHarness } from './store-contract.js';

/** One-step plans whose step runs under a chosen executor (claims do not run them). */
function onePlan(step: Record<string, unknown>): Plan {
  return validatePlanObject({ name: 'flow', steps: [{ id: 's', ...step }] }, 'flow-contract');
}

const random = () => 0;

/**
 * Flow control as every store enforces it: limits stored in the store, held across store handles
 * (other processes) and across runs, a slot freed in a cycle reused in the same cycle, a rate
 * window, and work held back by a limit never hiding claimable work behind it. Nouns:
 * `FlowLimitStore` (src/store/contract/flow-limits.ts) and the claims of `ClaimStore.cycle`.
 */
export function describeFlowContract(name: string, makeHarness: () => StoreHarness): void {
  describe(`Store flow control: ${name}`, () => {
    let harness: StoreHarness;
    let store: Store;
    let other: Store | null = null;

    beforeEach(async () => {
      harness = makeHarness();
      store = await harness.open();
    });
    afterEach(async () => {
      await other?.close();
      other = null;
      await store.close();
      await harness.cleanup();
    });

    const createRuns = async (count: number, plan: Plan, prefix = 'r', now = 1000) => {
      for (let i = 0; i < count; i++) {
        await store.createRun({
          id: `${prefix}${String(i).padStart(3, '0')}`,
          plan,
          planHash: 'h',
          inputs: {},
          workspace: '/ws',
          now,
        });
      }
    };
    const cycle = (s: Store, now: number, owner: string, completions: Completion[] = [], claimLimit = 10) =>
      s.cycle({ owner, now, leaseMs: 60_000, completions, claimLimit, random });
    const done = (claim: ClaimedStep, now: number): Completion => ({
      runId: claim.runId,
      stepId: claim.stepId,
      attempt: claim.attempt,
      owner: claim.owner,
      outcome: { ok: true, summary: 'ok', outputs: [] },
      startedAt: now - 1,
      endedAt: now,
      logPath: null,
    });

    it('holds a concurrency limit across runs and store handles, and reuses a freed slot in the same cycle', async () => {
      await store.setFlowLimit({ key: 'fn:noop', concurrency: 2, rate: null }, 1);
      await createRuns(5, onePlan({ fn: 'noop' }));
      other = await harness.reopen();
      const first = await cycle(store, 2000, 'w1');
      expect(first.claimed).toHaveLength(2);
      // Another process sees the same limit and the two attempts running.
      expect((await cycle(other, 2001, 'w2')).claimed).toHaveLength(0);
      expect(await other.listFlowLimits(2002)).toEqual([
        { key: 'fn:noop', concurrency: 2, rate: null, running: 2, recentStarts: 0, updatedAt: 1 },
      ]);
      // A completion frees a slot that the same transaction fills again: still 2, never 3.
      const second = await cycle(store, 2003, 'w1', [done(first.claimed[0]!, 2003)]);
      expect(second.accepted).toEqual([true]);
      expect(second.claimed).toHaveLength(1);
      expect((await store.listFlowLimits(2004))[0]?.running).toBe(2);
      expect((await cycle(other, 2005, 'w2')).claimed).toHaveLength(0);
      // Raising the limit applies from the next claim on, whoever claims.
      await other.setFlowLimit({ key: 'fn:noop', concurrency: 3, rate: null }, 2006);
      expect((await cycle(store, 2007, 'w1')).claimed).toHaveLength(1);
      // Removing it releases the rest.
      expect(await store.removeFlowLimit('fn:noop')).toBe(true);
      expect(await store.removeFlowLimit('fn:noop')).toBe(false);
      expect((await cycle(other, 2008, 'w2')).claimed).toHaveLength(1);
      expect(await store.listFlowLimits(2009)).toEqual([]);
    });

    it("counts a cancelled run's attempt until its worker reports it stopped, or its lease runs out", async () => {
      await store.setFlowLimit({ key: 'fn:noop', concurrency: 1, rate: null }, 1);
      await createRuns(3, onePlan({ fn: 'noop' }));
      const [first] = (await cycle(store, 2000, 'w1')).claimed;
      expect(first?.runId).toBe('r000');
      await store.cancelRun('r000', 2001);
      // Its worker learns of the cancel at its next renewal: until then its process may still run.
      expect((await cycle(store, 2002, 'w2')).claimed).toHaveLength(0);
      expect((await store.listFlowLimits(2003))[0]?.running).toBe(1);
      const lost = await store.renewLeases('w1', [first!], 60_000, 3000);
      expect(lost.map((attempt) => attempt.runId)).toEqual(['r000']);
      // The worker stops the attempt and reports it: discarded, and the slot is free at once.
      const reported = await cycle(store, 3001, 'w1', [done(first!, 3001)], 0);
      expect(reported.accepted).toEqual([false]);
      const [second] = (await cycle(store, 3002, 'w2')).claimed;
      expect(second?.runId).toBe('r001');
      // A worker that died never reports: its slot is held until the lease runs out.
      await store.cancelRun('r001', 3003);
      expect((await cycle(store, 3004, 'w3')).claimed).toHaveLength(0);
      const after = await cycle(store, 3002 + 60_001, 'w3');
      expect(after.claimed.map((c) => c.runId)).toEqual(['r002']);
      expect((await store.getRun('r000'))?.steps[0]).toMatchObject({
        status: 'cancelled',
        leaseExpiresAt: null,
      });
    });

    it('admits at most the rate in any window, then the next starts once the window has moved on', async () => {
      await store.setFlowLimit({ key: 'openai', concurrency: null, rate: { count: 3, windowMs: 10_000 } }, 1);
      await createRuns(5, onePlan({ model: { provider: 'openai', model: 'gpt-4o-mini', prompt: 'hi' } }));
      const first = await cycle(store, 1000, 'w1');
      expect(first.claimed).toHaveLength(3);
      // Finishing them frees no rate: the starts still count for 10 s.
      const second = await cycle(
        store,
        2000,
        'w1',
        first.claimed.map((c) => done(c, 2000)),
      );
      expect(second.claimed).toHaveLength(0);
      expect((await store.listFlowLimits(2000))[0]).toMatchObject({ running: 0, recentStarts: 3 });
      other = await harness.reopen();
      expect((await cycle(other, 10_999, 'w2')).claimed).toHaveLength(0);
      const later = await cycle(other, 11_001, 'w2');
      expect(later.claimed).toHaveLength(2);
    });

    it('keys steps by their executor unless the plan names a flowKey, and limits each key on its own', async () => {
      await store.setFlowLimit({ key: 'claude', concurrency: 1, rate: null }, 1);
      await store.setFlowLimit({ key: 'github', concurrency: 1, rate: null }, 1);
      await createRuns(3, onePlan({ instruction: 'x', agent: { command: ['/opt/bin/claude', '-p'] } }), 'a');
      await createRuns(
        3,
        onePlan({ instruction: 'x', agent: { command: ['claude', '-p'] }, flowKey: 'github' }),
        'b',
      );
      await createRuns(2, onePlan({ fn: 'free' }), 'c');
      const claimed = (await cycle(store, 2000, 'w1')).claimed;
      const byPrefix = (p: string) => claimed.filter((c) => c.runId.startsWith(p)).length;
      expect([byPrefix('a'), byPrefix('b'), byPrefix('c')]).toEqual([1, 1, 2]);
      const limits = await store.listFlowLimits(2001);
      expect(limits.map((l) => [l.key, l.running])).toEqual([
        ['claude', 1],
        ['github', 1],
      ]);
    });

    it('never lets work held back by a limit hide claimable work due after it', {
      timeout: 60_000,
    }, async () => {
      await store.setFlowLimit({ key: 'fn:slow', concurrency: 1, rate: null }, 1);
      // More held back than one cycle pages through (SQLite reads 20 pages of 64 due steps).
      await createRuns(1300, onePlan({ fn: 'slow' }), 'a', 1000);
      await createRuns(1, onePlan({ fn: 'fast' }), 'z', 1500);
      const claimed: ClaimedStep[] = [];
      for (let i = 0; i < 3; i++) claimed.push(...(await cycle(store, 2000 + i, 'w1', [], 3)).claimed);
      expect(claimed.filter((c) => c.runId.startsWith('a'))).toHaveLength(1);
      expect(claimed.filter((c) => c.runId.startsWith('z'))).toHaveLength(1);
    });

    it('refuses a malformed limit with a message naming it, and keeps limits across reopen', async () => {
      const attempts: [string, Parameters<Store['setFlowLimit']>[0]][] = [
        ['flow key "bad key"', { key: 'bad key', concurrency: 1, rate: null }],
        ['concurrency must be a whole number', { key: 'k', concurrency: 0, rate: null }],
        ['window of at least 1s', { key: 'k', concurrency: null, rate: { count: 1, windowMs: 10 } }],
        ['give a concurrency, a rate or both', { key: 'k', concurrency: null, rate: null }],
      ];
      for (const [message, limit] of attempts) {
        const error = await store.setFlowLimit(limit, 1).then(
          () => null,
          (e: unknown) => e,
        );
        expect(isBatonError(error, 'INVALID_ARGUMENT')).toBe(true);
        expect((error as Error).message).toContain(message);
      }
      await store.setFlowLimit(
        { key: 'api/github', concurrency: 4, rate: { count: 10, windowMs: 60_000 } },
        5,
      );
      other = await harness.reopen();
      expect(await other.listFlowLimits(6)).toEqual([
        {
          key: 'api/github',
          concurrency: 4,
          rate: { count: 10, windowMs: 60_000 },
          running: 0,
          recentStarts: 0,
          updatedAt: 5,
        },
      ]);
    });
  });
}
