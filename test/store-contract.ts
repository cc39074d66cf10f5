import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import type { BatonEvent, StoredEvent } from '../src/core/events.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { Plan } from '../src/core/plan/types.js';
import { type Completion, NO_STEPS, type Store } from '../src/store/store.js';

/**
 * The contract every Store implementation passes (SQLite and PostgreSQL; see src/store/store.ts).
 * `open` returns a fresh, empty store; `reopen` a second handle on the same data (another process's view).
 *
 * This suite covers the nouns that have no suite of their own (src/store/contract/): `RunStore`
 * (stores and reads a run), `ClaimStore` (claims, claim order, chains, leases, reclaim, retries,
 * budgets, fallbacks, two handles), `RunCommands` (retry, skip, cancel, approve, reject, resolve,
 * resume), `EventStore.appendEvents`, `EffectStore`, `HookStore` and `RetentionStore` (gc). The
 * others: store-flow-contract.ts (FlowLimitStore), store-waits-contract.ts (EventStore's waits),
 * store-console-contract.ts (OverviewStore), store-schedules-contract.ts (ScheduleStore),
 * store-metrics-contract.ts (MetricsStore), store-rerun-contract.ts (RunCommands.rerunFrom),
 * store-when-contract.ts and store-for-each-contract.ts (the claims of `when` and fan-outs).
 */
export interface StoreHarness {
  open(): Promise<Store>;
  reopen(): Promise<Store>;
  cleanup(): Promise<void>;
}

export function chainPlan(steps: number, extra: Record<string, unknown> = {}): Plan {
  return validatePlanObject(
    {
      name: 'chain',
      defaults: { retry: { maxAttempts: 2, initialDelayMs: 0, maxDelayMs: 0 } },
      steps: Array.from({ length: steps }, (_, i) => ({
        id: `s${i + 1}`,
        fn: 'noop',
        ...(i > 0 ? { dependsOn: [`s${i}`] } : {}),
      })),
      ...extra,
    },
    'contract',
  );
}

export function diamondPlan(): Plan {
  return validatePlanObject(
    {
      name: 'diamond',
      limits: { concurrency: 2 },
      steps: [
        { id: 'a', fn: 'noop' },
        { id: 'b', fn: 'noop', dependsOn: ['a'] },
        { id: 'c', fn: 'noop', dependsOn: ['a'] },
        { id: 'd', fn: 'noop', dependsOn: ['a'] },
        { id: 'e', fn: 'noop', dependsOn: ['b', 'c', 'd'] },
      ],
    },
    'contract',
  );
}

const random = () => 0;
const okOutcome = {
  ok: true as const,
  summary: 'fine',
  outputs: [{ path: 'out.md', size: 3, sha256: 'abc' }],
};

export function describeStoreContract(name: string, makeHarness: () => StoreHarness): void {
  describe(`Store contract: ${name}`, () => {
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

    const create = (plan: Plan, id = 'run1', now = 1000) =>
      store.createRun({ id, plan, planHash: 'h', inputs: { x: '1' }, workspace: '/ws', now });
    const cycle = (now: number, completions: Completion[] = [], claimLimit = 10, owner = 'w1') =>
      store.cycle({ owner, now, leaseMs: 1000, completions, claimLimit, random });
    const done = (
      c: { runId: string; stepId: string; attempt: number },
      now: number,
      owner = 'w1',
    ): Completion => ({
      ...c,
      owner,
      outcome: okOutcome,
      startedAt: now - 1,
      endedAt: now,
      logPath: null,
    });

    it('stores a run with its plan snapshot, inputs and a run.created event', async () => {
      const summary = await create(chainPlan(3));
      expect(summary).toMatchObject({
        id: 'run1',
        planName: 'chain',
        status: 'running',
        stepCounts: { ready: 1, pending: 2 },
      });
      const run = await store.getRun('run1');
      expect(run?.plan.steps.map((s) => s.id)).toEqual(['s1', 's2', 's3']);
      expect(run?.inputs).toEqual({ x: '1' });
      expect(run?.workspace).toBe('/ws');
      expect((await store.getEvents('run1')).map((e) => e.type)).toEqual(['run.created']);
      expect(await store.getRun('nope')).toBeNull();
      expect((await store.listRuns()).map((r) => r.id)).toEqual(['run1']);
    });

    it('reads a run with the steps in some states only, or every step of a run up to a size', async () => {
      const plan = diamondPlan();
      plan.steps[3]!.title = 'the d step';
      await create(plan);
      const [a] = (await cycle(1000)).claimed;
      const usage = { inputTokens: 10, outputTokens: 2, costUsd: 0.25 };
      // a succeeds (with usage); two of b, c, d are claimed (concurrency 2), one stays ready; e pending.
      await cycle(1010, [{ ...done(a!, 1010), outcome: { ...okOutcome, usage } }]);
      const full = (await store.getRun('run1'))!;
      const idsIn = (...statuses: string[]) =>
        full.steps.filter((step) => statuses.includes(step.status)).map((step) => step.stepId);
      expect(idsIn('running')).toHaveLength(2);
      const some = await store.getRunSteps('run1', { statuses: ['succeeded', 'ready'], everyStepUpTo: 4 });
      expect(some?.steps.map((step) => step.stepId)).toEqual(idsIn('succeeded', 'ready'));
      // The same step objects as getRun's (state, title, dependsOn), in plan order.
      expect(some?.steps).toEqual(
        full.steps.filter((step) => idsIn('succeeded', 'ready').includes(step.stepId)),
      );
      expect(some?.steps[0]).toMatchObject({ stepId: 'a', usage, title: 'a', dependsOn: [] });
      expect(some?.steps[0]?.resultJson).toContain('fine');
      // Everything else of the run as getRun has it; the counts are of every step.
      const { planHash: _hash, inputs: _inputs, steps: _steps, ...rest } = full;
      expect({ ...some, steps: [] }).toEqual({ ...rest, steps: [] });
      expect(some?.stepCounts).toEqual({ succeeded: 1, running: 2, ready: 1, pending: 1 });
      const running = await store.getRunSteps('run1', { statuses: ['running'], everyStepUpTo: 0 });
      expect(running?.steps.map((step) => step.stepId)).toEqual(idsIn('running'));
      // A run of at most `everyStepUpTo` steps: every step, whatever the statuses.
      expect((await store.getRunSteps('run1', { statuses: [], everyStepUpTo: 5 }))?.steps).toEqual(
        full.steps,
      );
      // No limit (`status --all`).
      const every = { statuses: [], everyStepUpTo: Number.MAX_SAFE_INTEGER };
      expect((await store.getRunSteps('run1', every))?.steps).toEqual(full.steps);
      expect((await store.getRunSteps('run1', { statuses: ['pending'], everyStepUpTo: 4 }))?.steps).toEqual([
        { ...full.steps[4], title: 'e', dependsOn: ['b', 'c', 'd'] },
      ]);
      expect(full.steps[3]?.title).toBe('the d step');
      // NO_STEPS: the summary (what an engine or Baton.result polls), no step.
      expect(await store.getRunSteps('run1', NO_STEPS)).toEqual({ ...rest, steps: [] });
      expect(await store.getRunSteps('nope', { statuses: ['pending'], everyStepUpTo: 10 })).toBeNull();
    });

    it('claims only due steps of running runs, within the claim limit and per-run concurrency', async () => {
      await create(diamondPlan());
      const first = await cycle(1000);
      expect(first.claimed.map((c) => c.stepId)).toEqual(['a']);
      expect(first.claimed[0]).toMatchObject({
        attempt: 1,
        owner: 'w1',
        leaseExpiresAt: 2000,
        inputs: { x: '1' },
        workspace: '/ws',
      });
      // Committing a and claiming successors happens in one transaction, limited to concurrency 2.
      const second = await cycle(1010, [done(first.claimed[0]!, 1010)]);
      expect(second.accepted).toEqual([true]);
      expect(second.claimed).toHaveLength(2);
      expect((await cycle(1020)).claimed).toHaveLength(0);
    });

    it('claims steps due at the same time in plan order, not by step id, from the database and from memory', async () => {
      // Declared out of alphabetical order: a store ordering ties by step id would start alpha first.
      const plan = validatePlanObject(
        {
          name: 'order',
          limits: { concurrency: 4 },
          steps: [
            { id: 'first', fn: 'noop' },
            { id: 'zeta', fn: 'noop', dependsOn: ['first'] },
            { id: 'mid', fn: 'noop', dependsOn: ['first'] },
            { id: 'alpha', fn: 'noop', dependsOn: ['first'] },
          ],
        },
        'contract',
      );
      /**
       * Creates the run, claims and completes `first`, then claims its successors (all due at the
       * same time) with each claim limit in turn: in the cycle that completed `first` (`inMemory`:
       * they are due in memory only, then in the database) or in later ones; of any run, or
       * `driven` (a process awaiting this one run). Leases outlive the test: nothing is reclaimed.
       */
      const claimTurns = async (
        runId: string,
        at: number,
        limits: number[],
        how: { inMemory: boolean; driven: boolean },
      ) => {
        await create(plan, runId, at);
        const request = (now: number, claimLimit: number, completions: Completion[] = []) => ({
          owner: 'w1',
          now,
          leaseMs: 1e9,
          completions,
          claimLimit,
          random,
          ...(how.driven ? { runId } : {}),
        });
        const [first] = (await store.cycle(request(at, 1))).claimed;
        let completions = [done(first!, at + 10)];
        if (!how.inMemory) {
          await store.cycle(request(at + 10, 0, completions));
          completions = [];
        }
        const turns: string[][] = [];
        for (const limit of limits) {
          const { claimed } = await store.cycle(request(at + 20, limit, completions));
          turns.push(claimed.map((c) => `${c.runId}:${c.stepId}`));
          completions = [];
        }
        return turns;
      };
      const inTurns = (runId: string, turns: string[][]) =>
        turns.map((turn) => turn.map((stepId) => `${runId}:${stepId}`));
      const oneByOne = [['zeta'], ['mid'], ['alpha']];
      const twoByTwo = [['zeta', 'mid'], ['alpha']];
      const inMemory = { inMemory: true, driven: false };
      expect(await claimTurns('run1', 1000, [1, 1, 1], inMemory)).toEqual(inTurns('run1', oneByOne));
      expect(await claimTurns('run2', 2000, [2, 2], inMemory)).toEqual(inTurns('run2', twoByTwo));
      const inMemoryDriven = { inMemory: true, driven: true };
      expect(await claimTurns('run3', 3000, [1, 1, 1], inMemoryDriven)).toEqual(inTurns('run3', oneByOne));
      const stored = { inMemory: false, driven: false };
      expect(await claimTurns('run4', 4000, [1, 1, 1], stored)).toEqual(inTurns('run4', oneByOne));
      expect(await claimTurns('run5', 5000, [2, 2], stored)).toEqual(inTurns('run5', twoByTwo));
      const storedDriven = { inMemory: false, driven: true };
      expect(await claimTurns('run6', 6000, [1, 1, 1], storedDriven)).toEqual(inTurns('run6', oneByOne));
    });

    it('does not claim a step before its due time', async () => {
      await create(chainPlan(1, { defaults: { delayBeforeMs: 5000 } }));
      expect((await cycle(1000)).claimed).toHaveLength(0);
      expect(await store.nextWakeAt()).toBe(6000);
      expect((await cycle(6000)).claimed).toHaveLength(1);
    });

    const stored = async (stepId: string) => (await store.getStepResults('run1', [stepId]))[stepId];

    it('drives a chain to success; a succeeded step is never claimed again', async () => {
      await create(chainPlan(3));
      let now = 1000;
      let claimed = (await cycle(now)).claimed;
      const seen: string[] = [];
      // Each claim carries the stored results of the steps it reads (a function step: its dependencies).
      const carried: Record<string, unknown>[] = [];
      while (claimed.length > 0) {
        now += 10;
        seen.push(...claimed.map((c) => c.stepId));
        carried.push(...claimed.map((c) => ({ ...c.results })));
        claimed = (
          await cycle(
            now,
            claimed.map((c) => done(c, now)),
          )
        ).claimed;
      }
      expect(seen).toEqual(['s1', 's2', 's3']);
      expect(carried).toEqual([{}, { s1: await stored('s1') }, { s2: await stored('s2') }]);
      const run = await store.getRun('run1');
      expect(run?.status).toBe('succeeded');
      expect(run?.finishedAt).toBe(now);
      expect(await store.nextWakeAt()).toBeNull();
      const results = await store.getStepResults('run1', ['s1', 's3', 'zz']);
      expect(Object.keys(results).sort()).toEqual(['s1', 's3']);
      expect(results.s1?.summary).toBe('fine');
      const attempts = await store.getAttempts('run1', 's1');
      expect(attempts).toMatchObject([{ attempt: 1, outcome: 'succeeded', outputs: okOutcome.outputs }]);
      const types = (await store.getEvents('run1')).map((e) => e.type);
      expect(types.filter((t) => t === 'step.started')).toHaveLength(3);
      expect(types[types.length - 1]).toBe('run.succeeded');
    });

    it('does not let a run at its concurrency hide other runs due later (no starvation)', async () => {
      const wide = validatePlanObject(
        {
          name: 'wide',
          limits: { concurrency: 1 },
          steps: Array.from({ length: 100 }, (_, i) => ({ id: `w${i}`, fn: 'noop' })),
        },
        'contract',
      );
      await create(wide, 'busy', 1000);
      await create(chainPlan(1), 'small', 1001);
      const claims = (await cycle(2000, [], 8)).claimed.map((c) => c.runId).sort();
      expect(claims).toEqual(['busy', 'small']);
    });

    it('claims only the function steps this process can run', async () => {
      await create(chainPlan(1));
      const none = await store.cycle({
        owner: 'w1',
        now: 1000,
        leaseMs: 1000,
        completions: [],
        claimLimit: 5,
        random,
        functions: [],
      });
      expect(none.claimed).toHaveLength(0);
      const some = await store.cycle({
        owner: 'w1',
        now: 1000,
        leaseMs: 1000,
        completions: [],
        claimLimit: 5,
        random,
        functions: ['noop'],
      });
      expect(some.claimed).toHaveLength(1);
    });

    it("claims a function step's agent fallback in a process without that function", async () => {
      const plan = validatePlanObject(
        {
          name: 'fb',
          steps: [
            {
              id: 's',
              fn: 'flaky',
              retry: { maxAttempts: 1 },
              fallback: { instruction: 'do it by hand', agent: { command: ['claude', '-p'] } },
            },
          ],
        },
        'contract',
      );
      await create(plan);
      const base = { owner: 'w1', leaseMs: 1000, claimLimit: 5, random };
      const [claim] = (await store.cycle({ ...base, now: 1000, completions: [], functions: ['flaky'] }))
        .claimed;
      const failed: Completion = {
        runId: claim!.runId,
        stepId: 's',
        attempt: claim!.attempt,
        owner: 'w1',
        outcome: { ok: false, failureClass: 'agent_failed', message: 'no' },
        startedAt: 1000,
        endedAt: 1001,
        logPath: null,
      };
      await store.cycle({ ...base, now: 1001, completions: [failed], claimLimit: 0 });
      // The fallback is an agent step now: a process without `flaky` runs it.
      const next = await store.cycle({ ...base, now: 2000, completions: [], functions: [] });
      expect(next.claimed.map((c) => [c.stepId, c.step.kind, c.fallback])).toEqual([['s', 'agent', true]]);
    });

    it('accepts a late completion whose lease ran out but was not reclaimed yet, in the same cycle as reclaims', async () => {
      await create(chainPlan(2));
      const [claim] = (await cycle(1000)).claimed;
      // Lease ended at 2000; the worker reports at 5000 (it was suspended), before anyone reclaimed.
      const late = await cycle(5000, [done(claim!, 5000)]);
      expect(late.accepted).toEqual([true]);
      expect(late.reclaimed).toHaveLength(0);
      expect(late.claimed.map((c) => c.stepId)).toEqual(['s2']);
      const attempts = await store.getAttempts('run1', 's1');
      expect(attempts.map((a) => a.outcome)).toEqual(['succeeded']);
    });

    it('discards the outcome of an attempt whose lease was lost', async () => {
      await create(chainPlan(1));
      const [claim] = (await cycle(1000)).claimed;
      const result = await cycle(1010, [done(claim!, 1010, 'someone-else')], 0);
      expect(result.accepted).toEqual([false]);
      expect((await store.getRun('run1'))?.steps[0]?.status).toBe('running');
    });

    it('reclaims an expired lease as an interrupted attempt, then retries it', async () => {
      await create(chainPlan(1));
      const [claim] = (await cycle(1000, [], 10, 'dead')).claimed;
      const later = await cycle(2001, [], 10, 'alive');
      expect(later.reclaimed).toMatchObject([{ runId: 'run1', stepId: 's1', attempt: 1 }]);
      expect(later.claimed).toMatchObject([{ stepId: 's1', attempt: 2, owner: 'alive' }]);
      const attempts = await store.getAttempts('run1', 's1');
      expect(attempts[0]).toMatchObject({ attempt: 1, outcome: 'interrupted', failureClass: 'interrupted' });
      // The dead worker's late result is refused.
      expect((await cycle(2002, [done(claim!, 2002, 'dead')], 0)).accepted).toEqual([false]);
    });

    it('renews leases it holds and reports the ones it lost', async () => {
      await create(chainPlan(1));
      await create(chainPlan(1), 'run2');
      const claims = (await cycle(1000)).claimed;
      expect(claims).toHaveLength(2);
      await store.cancelRun('run2', 1100);
      const lost = await store.renewLeases('w1', claims, 1000, 1500);
      expect(lost.map((l) => l.runId)).toEqual(['run2']);
      // Renewed until 2500: not reclaimed at 2100.
      expect((await cycle(2100, [], 0, 'other')).reclaimed).toHaveLength(0);
    });

    it('writes a transition all or nothing', async () => {
      await create(chainPlan(2));
      await create(chainPlan(1), 'run2');
      const claims = (await cycle(1000)).claimed;
      const [claim, other] = ['run1', 'run2'].map((id) => claims.find((c) => c.runId === id)!);
      const eventsBefore = await store.getEvents('run1');
      // A value JSON cannot hold (a BigInt) fails the cycle after run1's step was settled.
      const bogus: Completion = {
        ...done(other!, 1010),
        outcome: { ok: true, summary: 'x', outputs: [], value: 10n as never },
      };
      await expect(cycle(1010, [done(claim!, 1010), bogus])).rejects.toThrow();
      expect((await store.getRun('run1'))?.steps[0]?.status).toBe('running');
      expect(await store.getEvents('run1')).toEqual(eventsBefore);
    });

    it('labels: stored with the run, read by getRunLabels, and they filter listRunPage, selectRuns and listBlockedSteps', async () => {
      const plan = chainPlan(1, {
        defaults: { retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 } },
      });
      const make = (id: string, labels: Record<string, string>, now: number) =>
        store.createRun({ id, plan, planHash: 'h', inputs: {}, workspace: '/ws', now, labels });
      await make('a', { team: 'growth', env: 'prod' }, 1000);
      await make('b', { team: 'growth' }, 1001);
      await make('c', {}, 1002);
      expect(await store.getRunLabels(['a', 'b', 'c', 'nope'])).toEqual({
        a: { env: 'prod', team: 'growth' },
        b: { team: 'growth' },
      });
      const page = await store.listRunPage({ labels: { team: 'growth' } });
      expect(page.runs.map((r) => r.id)).toEqual(['b', 'a']);
      expect(page.total).toBe(2);
      expect(
        (await store.listRunPage({ labels: { team: 'growth', env: 'prod' } })).runs.map((r) => r.id),
      ).toEqual(['a']);
      const selected = await store.selectRuns({
        statuses: ['running'],
        labels: { team: 'growth' },
        limit: 10,
      });
      expect(selected).toEqual([
        { id: 'a', planName: 'chain', status: 'running' },
        { id: 'b', planName: 'chain', status: 'running' },
      ]);
      expect(await store.selectRuns({ statuses: ['blocked'], limit: 10 })).toEqual([]);
      // All three fail once and are blocked: a and c as transient, b as fatal.
      const claimed = (await cycle(1010)).claimed;
      await cycle(
        1020,
        claimed.map((c) => ({
          ...done(c, 1020),
          outcome: { ok: false, failureClass: c.runId === 'b' ? 'fatal' : 'transient', message: 'down' },
        })),
      );
      const blocked = await store.listBlockedSteps(100, {
        failureClass: 'transient',
        labels: { team: 'growth' },
      });
      expect(blocked.map((b) => [b.runId, b.stepId, b.failureClass])).toEqual([['a', 's1', 'transient']]);
      expect(
        (await store.listBlockedSteps(100, { failureClass: 'transient' })).map((b) => b.runId).sort(),
      ).toEqual(['a', 'c']);
      expect(await store.listBlockedSteps(100, { blockedFrom: 1021 })).toEqual([]);
      expect((await store.listBlockedSteps(100, { planName: 'other' })).length).toBe(0);
    });

    it('bulk: retryRunSteps and cancelRuns change many runs at once; a run that cannot take it is refused, the rest written', async () => {
      const plan = chainPlan(1, {
        defaults: { retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 } },
      });
      for (const [i, id] of ['a', 'b', 'c'].entries()) await create(plan, id, 1000 + i);
      const claimed = (await cycle(1010)).claimed;
      await cycle(
        1020,
        claimed.map((c) => ({
          ...done(c, 1020),
          outcome: { ok: false, failureClass: 'transient', message: 'down' },
        })),
      );
      await store.cancelRun('c', 1025);
      // Listed as fatal, but blocked as transient now: it moved on, and is left as it is.
      const [moved] = await store.retryRunSteps(
        [{ runId: 'b', stepIds: ['s1'], failureClass: 'fatal' }],
        1026,
      );
      expect((moved as { refused: string }).refused).toContain('blocked as transient now, not fatal');
      expect((await store.getRun('b'))?.steps[0]?.status).toBe('blocked');
      const retried = await store.retryRunSteps(
        [
          { runId: 'a', stepIds: ['s1'], failureClass: 'transient' },
          { runId: 'b', stepIds: ['s1'] },
          { runId: 'c', stepIds: ['s1'] },
          { runId: 'nope', stepIds: ['s1'] },
        ],
        1030,
      );
      expect(retried.map((o) => [o.runId, 'summary' in o ? o.summary.status : 'refused'])).toEqual([
        ['a', 'running'],
        ['b', 'running'],
        ['c', 'refused'],
        ['nope', 'refused'],
      ]);
      expect((retried[2] as { refused: string }).refused).toContain('cancelled');
      for (const id of ['a', 'b']) {
        const run = await store.getRun(id);
        expect(run?.steps[0]).toMatchObject({ status: 'ready', dueAt: 1030 });
        expect((await store.getEvents(id)).filter((e) => e.type === 'step.retry_requested')).toHaveLength(1);
      }
      // Due again: the next cycle claims both.
      expect((await cycle(1040)).claimed.map((c) => c.runId).sort()).toEqual(['a', 'b']);
      const cancelled = await store.cancelRuns(['a', 'b', 'c'], 1050);
      expect(cancelled.map((o) => [o.runId, 'summary' in o ? o.summary.status : 'refused'])).toEqual([
        ['a', 'cancelled'],
        ['b', 'cancelled'],
        ['c', 'refused'],
      ]);
      expect((await store.getRun('a'))?.status).toBe('cancelled');
    });

    it('blocks after the retry cap, and lets a human retry, skip and cancel', async () => {
      await create(chainPlan(2));
      let [claim] = (await cycle(1000)).claimed;
      const failure = (c: typeof claim, now: number): Completion => ({
        ...done(c!, now),
        outcome: { ok: false, failureClass: 'agent_failed', message: `exit ${now}` },
      });
      [claim] = (await cycle(1010, [failure(claim, 1010)])).claimed;
      expect(claim?.attempt).toBe(2);
      expect(claim?.lastError).toBe('exit 1010');
      await cycle(1020, [failure(claim, 1020)]);
      let run = await store.getRun('run1');
      expect(run?.status).toBe('blocked');
      expect(run?.steps[0]).toMatchObject({ status: 'blocked' });
      expect(run?.blockedReason).toContain('s1');
      expect((await store.retryStep('run1', 's1', 1030)).status).toBe('running');
      expect((await cycle(1030)).claimed[0]).toMatchObject({ stepId: 's1', attempt: 3 });
      // A human retry gives fresh tries: the attempt running is the first that counts.
      expect((await store.getRun('run1'))?.steps[0]).toMatchObject({ status: 'running', tries: 1 });
      await store.cancelRun('run1', 1040);
      run = await store.getRun('run1');
      expect(run?.status).toBe('cancelled');
      expect((await cycle(1050)).claimed).toHaveLength(0);
      await create(chainPlan(2), 'run2');
      expect((await store.skipStep('run2', 's1', 1060)).stepCounts).toMatchObject({ skipped: 1, ready: 1 });
    });

    it('a guarded append is refused when what it guards against is there, also from two handles at once', async () => {
      await create(chainPlan(1));
      const start = (await store.getEvents('run1')).at(-1)!.seq;
      const answer = (by: string): BatonEvent => ({ type: 'step.approved', stepId: 's1', by, comment: null });
      const guard = {
        afterSeq: start,
        refuse: (later: readonly StoredEvent[]) =>
          later.some((event) => event.type === 'step.approved') ? new Error('answered already') : null,
      };
      const other = await harness.reopen();
      try {
        const results = await Promise.allSettled([
          store.appendEvents('run1', [answer('a')], 1010, guard),
          other.appendEvents('run1', [answer('b')], 1010, guard),
        ]);
        expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
        const refused = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
        expect(String(refused.reason)).toContain('answered already');
      } finally {
        await other.close();
      }
      expect((await store.getEvents('run1', { afterSeq: start })).map((event) => event.type)).toEqual([
        'step.approved',
      ]);
      await expect(store.appendEvents('nope', [answer('c')], 1020, guard)).rejects.toThrow(/nope/);
    });

    it('a cycle names the runs it ended (a parent waiting on a child run looks at once)', async () => {
      await create(chainPlan(1));
      const [claim] = (await cycle(1000)).claimed;
      const result = await cycle(1010, [done(claim!, 1010)], 0);
      expect(result.endedRuns).toEqual(['run1']);
      expect((await cycle(1020)).endedRuns).toBeUndefined();
    });

    it('cancel with cleanup: the cleanup steps are stored and claimed, and the run is cancelled once they are done', async () => {
      const plan = validatePlanObject(
        {
          name: 'release',
          steps: [
            { id: 'branch', fn: 'noop', compensate: { fn: 'undo' } },
            { id: 'pr', fn: 'noop', dependsOn: ['branch'], compensate: { fn: 'undo' } },
          ],
          finally: [{ id: 'report', fn: 'noop' }],
        },
        'contract',
      );
      await create(plan);
      const [branch] = (await cycle(1000)).claimed;
      const [pr] = (await cycle(1010, [done(branch!, 1010)])).claimed;
      expect(pr).toMatchObject({ stepId: 'pr' });
      const summary = await store.cancelRun('run1', 1020, { compensate: true });
      expect(summary.status).toBe('running');
      // Another handle (another process) sees the appended steps and the snapshot's ending.
      const other = await harness.reopen();
      try {
        const run = await other.getRun('run1');
        expect(run?.steps.map((step) => [step.stepId, step.status])).toEqual([
          ['branch', 'succeeded'],
          ['pr', 'cancelled'],
          ['branch:compensate', 'ready'],
          ['report', 'pending'],
        ]);
        expect(run?.plan.closing).toMatchObject({ status: 'cancelled', from: 2 });
      } finally {
        await other.close();
      }
      const [undo] = (await cycle(1030, [], 10, 'w2')).claimed;
      expect(undo).toMatchObject({ stepId: 'branch:compensate', results: { branch: { summary: 'fine' } } });
      const [report] = (await cycle(1040, [done(undo!, 1040, 'w2')], 10, 'w2')).claimed;
      expect(report).toMatchObject({ stepId: 'report' });
      await cycle(1050, [done(report!, 1050, 'w2')], 0, 'w2');
      expect((await store.getRun('run1'))?.status).toBe('cancelled');
      const types = await eventTypes();
      expect(types.filter((type) => type === 'run.cancelled')).toHaveLength(1);
      expect(types.indexOf('run.cleanup_started')).toBeLessThan(types.indexOf('run.cancelled'));
    });

    const eventTypes = async (runId = 'run1', afterSeq = 0) =>
      (await store.getEvents(runId, { afterSeq })).map((e) => e.type);
    const lastSeq = async (runId = 'run1') => (await store.getEvents(runId)).at(-1)!.seq;
    const propose = (plan: Plan, id = 'run1', now = 1000) =>
      store.createRun({ id, plan, planHash: 'h', inputs: {}, workspace: '/ws', now, awaitingApproval: true });

    it('approves a proposed run: nothing is claimed before, its steps wait the delay after', async () => {
      await propose(chainPlan(2));
      expect((await store.getRun('run1'))?.status).toBe('awaiting_approval');
      expect((await cycle(1000)).claimed).toHaveLength(0);
      const summary = await store.approveRun('run1', 1100, 50);
      expect(summary).toMatchObject({ status: 'running', stepCounts: { ready: 1, pending: 1 } });
      expect(await eventTypes()).toEqual(['run.created', 'run.approved']);
      const run = await store.getRun('run1');
      // The delay becomes the minimum wait before each dependent step: the stored plan changed.
      expect(run?.plan.steps[1]?.delayBeforeMs).toBe(50);
      expect(run?.steps[0]).toMatchObject({ status: 'ready', dueAt: 1100 });
      const [claim] = (await cycle(1100)).claimed;
      expect(claim?.stepId).toBe('s1');
      // s2 becomes due 50 ms after s1 succeeded.
      expect((await cycle(1110, [done(claim!, 1110)])).claimed).toHaveLength(0);
      expect((await store.getRun('run1'))?.steps[1]).toMatchObject({ status: 'ready', dueAt: 1160 });
      expect((await cycle(1160)).claimed.map((c) => c.stepId)).toEqual(['s2']);
      await expect(store.approveRun('run1', 1200)).rejects.toSatisfy((e) =>
        isBatonError(e, 'INVALID_TRANSITION'),
      );
    });

    it('rejects a proposed run: it ends cancelled and never starts', async () => {
      await propose(chainPlan(2));
      const summary = await store.rejectRun('run1', 1100);
      expect(summary).toMatchObject({ status: 'cancelled', stepCounts: { cancelled: 2 } });
      expect(await eventTypes()).toEqual([
        'run.created',
        'run.rejected',
        'step.cancelled',
        'step.cancelled',
        'run.cancelled',
      ]);
      const run = await store.getRun('run1');
      expect(run?.steps.map((s) => s.status)).toEqual(['cancelled', 'cancelled']);
      expect(run?.finishedAt).toBe(1100);
      expect((await cycle(1200)).claimed).toHaveLength(0);
      await create(chainPlan(1), 'run2');
      await expect(store.rejectRun('run2', 1300)).rejects.toSatisfy((e) =>
        isBatonError(e, 'INVALID_TRANSITION'),
      );
    });

    it('resolves a blocked step with a human result: it succeeds and its successor is claimed', async () => {
      await create(chainPlan(2, { defaults: { retry: { maxAttempts: 1 } } }));
      const [claim] = (await cycle(1000)).claimed;
      await cycle(1010, [
        { ...done(claim!, 1010), outcome: { ok: false, failureClass: 'agent_failed', message: 'no' } },
      ]);
      expect((await store.getRun('run1'))?.status).toBe('blocked');
      const before = await lastSeq();
      const result = { summary: 'done by hand', outputs: [] };
      const summary = await store.resolveStep('run1', 's1', result, 1020);
      expect(summary).toMatchObject({ status: 'running', stepCounts: { succeeded: 1, ready: 1 } });
      expect(await eventTypes('run1', before)).toEqual(['step.resolved', 'run.resumed']);
      const run = await store.getRun('run1');
      expect(run?.steps[0]).toMatchObject({ status: 'succeeded', lastError: null, blockedReason: null });
      expect(await store.getStepResults('run1', ['s1'])).toEqual({ s1: result });
      const [next] = (await cycle(1030)).claimed;
      expect(next).toMatchObject({ stepId: 's2', results: { s1: result } });
      await expect(store.resolveStep('run1', 's2', result, 1040)).rejects.toSatisfy((e) =>
        isBatonError(e, 'INVALID_TRANSITION'),
      );
    });

    it('resumes a run stopped by its maxSteps budget with as many attempts again', async () => {
      await create(chainPlan(3, { limits: { maxSteps: 1 } }));
      const [claim] = (await cycle(1000)).claimed;
      // s1 used the one attempt allowed: the claim of s2 stops the run instead.
      expect((await cycle(1010, [done(claim!, 1010)])).claimed).toHaveLength(0);
      let run = await store.getRun('run1');
      expect(run?.status).toBe('blocked');
      expect(run?.blockedReason).toContain('maxSteps 1');
      await expect(store.retryStep('run1', 's2', 1020)).rejects.toSatisfy((e) =>
        isBatonError(e, 'INVALID_TRANSITION'),
      );
      const before = await lastSeq();
      const summary = await store.resumeRun('run1', 1020);
      expect(summary).toMatchObject({ status: 'running', blockedReason: null });
      expect(await eventTypes('run1', before)).toEqual(['run.resumed']);
      run = await store.getRun('run1');
      expect(run?.plan.limits.maxSteps).toBe(2);
      const [second] = (await cycle(1030)).claimed;
      expect(second?.stepId).toBe('s2');
      // Two attempts now: s3 is stopped again.
      await cycle(1040, [done(second!, 1040)]);
      expect((await store.getRun('run1'))?.status).toBe('blocked');
      await create(chainPlan(1), 'run2');
      await expect(store.resumeRun('run2', 1050)).rejects.toSatisfy((e) =>
        isBatonError(e, 'INVALID_TRANSITION'),
      );
    });

    it('refuses unknown runs and steps with clear errors, changing nothing', async () => {
      await create(chainPlan(1));
      await expect(store.retryStep('nope', 's1', 1)).rejects.toSatisfy((e) =>
        isBatonError(e, 'RUN_NOT_FOUND'),
      );
      await expect(store.skipStep('run1', 'zz', 1)).rejects.toSatisfy((e) =>
        isBatonError(e, 'STEP_NOT_FOUND'),
      );
      await expect(store.retryStep('run1', 's1', 1)).rejects.toSatisfy((e) =>
        isBatonError(e, 'INVALID_TRANSITION'),
      );
      expect((await store.getEvents('run1')).map((e) => e.type)).toEqual(['run.created']);
    });

    it("sees another handle's writes (no stale cached state)", async () => {
      await create(chainPlan(2));
      const [claim] = (await cycle(1000)).claimed;
      const other = await harness.reopen();
      try {
        await other.cancelRun('run1', 1005);
      } finally {
        await other.close();
      }
      const result = await cycle(1010, [done(claim!, 1010)]);
      expect(result.accepted).toEqual([false]);
      expect(result.claimed).toHaveLength(0);
      expect((await store.getRun('run1'))?.status).toBe('cancelled');
    });

    // Two handles on the same data, each with whatever it caches: a write through either (a cycle,
    // a human command, a renewal, gc) must be what the other's next read and cycle see.
    describe('two handles interleaved', () => {
      let other: Store;
      beforeEach(async () => {
        other = await harness.reopen();
      });
      afterEach(async () => {
        await other.close();
      });
      const cycleOn = (s: Store, now: number, completions: Completion[] = [], owner = 'w1') =>
        s.cycle({ owner, now, leaseMs: 1000, completions, claimLimit: 10, random });

      it("each handle's cycle commits what the other's claimed, and claims what it made due", async () => {
        await create(chainPlan(4));
        const [s1] = (await cycleOn(store, 1000)).claimed;
        const [s2] = (await cycleOn(other, 1010, [done(s1!, 1010)], 'w2')).claimed;
        expect(s2?.stepId).toBe('s2');
        const third = await cycleOn(store, 1020, [done(s2!, 1020, 'w2')]);
        expect(third.accepted).toEqual([true]);
        expect(third.claimed.map((c) => c.stepId)).toEqual(['s3']);
        expect((await other.getRun('run1'))?.steps.map((st) => st.status)).toEqual([
          'succeeded',
          'succeeded',
          'running',
          'pending',
        ]);
        const fourth = await cycleOn(other, 1030, [done(third.claimed[0]!, 1030)], 'w2');
        expect(fourth.accepted).toEqual([true]);
        expect(fourth.claimed.map((c) => c.stepId)).toEqual(['s4']);
        expect((await store.getRun('run1'))?.steps[3]).toMatchObject({ status: 'running', leaseOwner: 'w2' });
      });

      // The commands go through one handle at a time: a write through the other one alone may make
      // a cache distrust everything, which would hide what the same handle's own writes leave stale.
      const byEither = [
        ['this handle', () => store],
        ['the other handle', () => other],
      ] as const;

      for (const [through, commander] of byEither) {
        it(`a cycle sees a cancel, a skip and an approval made through ${through} since its last cycle`, async () => {
          await create(chainPlan(2), 'run1');
          await create(chainPlan(2), 'run2');
          await propose(chainPlan(1), 'run3');
          const claims = (await cycleOn(store, 1000)).claimed;
          expect(claims.map((c) => c.runId).sort()).toEqual(['run1', 'run2']);
          // Both runs are held by the cycle that claimed them; they change outside any cycle.
          await commander().cancelRun('run1', 1001);
          await commander().skipStep('run2', 's2', 1002);
          await commander().approveRun('run3', 1003);
          const next = await cycleOn(
            store,
            1010,
            claims.map((c) => done(c, 1010)),
          );
          expect(next.accepted).toEqual(claims.map((c) => c.runId === 'run2'));
          // run2's s2 was skipped (no successor to claim); run3 was approved.
          expect(next.claimed.map((c) => `${c.runId}/${c.stepId}`)).toEqual(['run3/s1']);
          for (const handle of [store, other]) {
            expect((await handle.getRun('run1'))?.status).toBe('cancelled');
            expect((await handle.getRun('run2'))?.steps.map((st) => st.status)).toEqual([
              'succeeded',
              'skipped',
            ]);
            expect((await handle.getRun('run2'))?.status).toBe('succeeded');
          }
        });

        it(`a cycle sees a retry, a resolve and a resume made through ${through}`, async () => {
          await create(chainPlan(2, { defaults: { retry: { maxAttempts: 1 } } }), 'run1');
          await create(chainPlan(2, { defaults: { retry: { maxAttempts: 1 } } }), 'run2');
          await create(chainPlan(2, { limits: { maxSteps: 1 } }), 'run3');
          const failed = (c: Completion): Completion => ({
            ...c,
            outcome: { ok: false, failureClass: 'agent_failed', message: 'no' },
          });
          const claims = (await cycleOn(store, 1000)).claimed;
          const byRun = (runId: string) => claims.find((c) => c.runId === runId)!;
          await cycleOn(store, 1010, [
            failed(done(byRun('run1'), 1010)),
            failed(done(byRun('run2'), 1010)),
            done(byRun('run3'), 1010),
          ]);
          for (const runId of ['run1', 'run2', 'run3'])
            expect((await other.getRun(runId))?.status).toBe('blocked');
          await commander().retryStep('run1', 's1', 1020);
          await commander().resolveStep('run2', 's1', { summary: 'by hand', outputs: [] }, 1021);
          await commander().resumeRun('run3', 1022);
          const next = await cycleOn(store, 1030);
          expect(next.claimed.map((c) => `${c.runId}/${c.stepId}/${c.attempt}`).sort()).toEqual([
            'run1/s1/2',
            'run2/s2/1',
            'run3/s2/1',
          ]);
        });
      }

      it('a cycle sees leases renewed through either handle', async () => {
        await create(chainPlan(1), 'run1');
        await create(chainPlan(1), 'run2');
        const claims = (await cycleOn(store, 1000)).claimed;
        const byRun = (runId: string) => claims.find((c) => c.runId === runId)!;
        // Leases end at 2000; run1's is renewed through the other handle, run2's through this one.
        expect(await other.renewLeases('w1', [byRun('run1')], 5000, 1500)).toEqual([]);
        expect(await store.renewLeases('w1', [byRun('run2')], 3000, 1500)).toEqual([]);
        expect((await cycleOn(store, 3000)).reclaimed).toEqual([]);
        const late = await cycleOn(other, 4600);
        expect(late.reclaimed.map((r) => r.runId)).toEqual(['run2']);
        const after = await cycleOn(store, 7000, [done(byRun('run1'), 6900)]);
        // run1's worker was late, not dead: its completion in the cycle that also reclaims counts.
        expect(after.accepted).toEqual([true]);
        expect((await other.getRun('run1'))?.status).toBe('succeeded');
      });

      it('a run stored again under the id of a run gc deleted is claimed, whichever handle deleted it', async () => {
        for (const [deleter, id] of [
          [() => store, 'run1'],
          [() => other, 'run2'],
        ] as const) {
          await create(chainPlan(1), id, 1000);
          const [claim] = (await cycleOn(store, 1000)).claimed;
          await cycleOn(store, 1010, [done(claim!, 1010)]);
          expect((await store.getRun(id))?.status).toBe('succeeded');
          expect(await deleter().deleteFinishedRuns(2000)).toEqual([id]);
          await create(chainPlan(1), id, 3000);
          const again = await cycleOn(store, 3000);
          expect(again.claimed.map((c) => `${c.runId}/${c.stepId}/${c.attempt}`)).toEqual([`${id}/s1/1`]);
          await cycleOn(store, 3010, [done(again.claimed[0]!, 3010)]);
        }
      });
    });

    it('lets two handles on the same data claim each step once', async () => {
      for (let i = 0; i < 5; i++) await create(chainPlan(1), `run${i}`);
      const other = await harness.reopen();
      try {
        const [a, b] = await Promise.all([
          store.cycle({ owner: 'A', now: 1000, leaseMs: 1000, completions: [], claimLimit: 3, random }),
          other.cycle({ owner: 'B', now: 1000, leaseMs: 1000, completions: [], claimLimit: 3, random }),
        ]);
        const keys = [...a!.claimed, ...b!.claimed].map((c) => c.runId);
        expect(new Set(keys).size).toBe(keys.length);
        expect(keys).toHaveLength(5);
      } finally {
        await other.close();
      }
    });

    it('appends events while a step runs, after the ones before, and refuses an unknown run', async () => {
      await create(chainPlan(1));
      const [claim] = (await cycle(1000)).claimed;
      await store.appendEvents(
        'run1',
        [
          {
            type: 'tool.failed',
            stepId: 's1',
            tool: 't',
            code: 'timeout',
            fingerprint: 'f',
            message: 'slow',
          },
          { type: 'tool.replayed', stepId: 's1', tool: 't', key: 'k' },
        ],
        1001,
      );
      await cycle(1002, [done(claim!, 1002)]);
      const types = (await store.getEvents('run1')).map((e) => e.type);
      expect(types.indexOf('tool.failed')).toBeGreaterThan(types.indexOf('step.started'));
      expect(types.indexOf('tool.replayed')).toBe(types.indexOf('tool.failed') + 1);
      expect(types.indexOf('step.succeeded')).toBeGreaterThan(types.indexOf('tool.replayed'));
      const failed = (await store.getEvents('run1')).find((e) => e.type === 'tool.failed');
      expect(failed).toMatchObject({ stepId: 's1', code: 'timeout', at: 1001 });
      await expect(store.appendEvents('nope', [{ type: 'run.cancelled' }], 1)).rejects.toSatisfy((e) =>
        isBatonError(e, 'RUN_NOT_FOUND'),
      );
    });

    it('records an effect intent once, then its result; a cleared intent may begin again', async () => {
      await create(chainPlan(1));
      const key = { runId: 'run1', stepId: 's1', key: 'send:abc' };
      expect(await store.beginEffect(key, 1000)).toBeNull();
      expect(await store.beginEffect(key, 1001)).toEqual({ state: 'intent' });
      const other = await harness.reopen();
      try {
        expect(await other.beginEffect(key, 1002)).toEqual({ state: 'intent' });
        await store.completeEffect(key, { id: 42, to: ['a'] }, 1003);
        expect(await other.beginEffect(key, 1004)).toEqual({ state: 'done', result: { id: 42, to: ['a'] } });
      } finally {
        await other.close();
      }
      const second = { ...key, key: 'send:def' };
      expect(await store.beginEffect(second, 1005)).toBeNull();
      await store.clearEffect(second);
      expect(await store.beginEffect(second, 1006)).toBeNull();
      // Effects belong to their step: the same key of another step is another effect.
      expect(await store.beginEffect({ ...key, stepId: 's2' }, 1007)).toBeNull();
    });

    it('adds the usage of every attempt to its run, failed ones included', async () => {
      await create(
        chainPlan(2, { defaults: { retry: { maxAttempts: 3, initialDelayMs: 0, maxDelayMs: 0 } } }),
      );
      const [first] = (await cycle(1000)).claimed;
      const usage = { inputTokens: 100, outputTokens: 20, costUsd: 0.5 };
      // The successor is claimed in the cycle that completes its dependency.
      const [second] = (await cycle(1001, [{ ...done(first!, 1001), outcome: { ...okOutcome, usage } }]))
        .claimed;
      const failed = { ok: false as const, failureClass: 'transient' as const, message: 'x', usage };
      await cycle(1003, [{ ...done(second!, 1003), outcome: failed }]);
      const run = await store.getRun('run1');
      expect(run?.usage).toEqual({ inputTokens: 200, outputTokens: 40, costUsd: 1 });
      const attempts = await store.getAttempts('run1', 's1');
      expect(attempts[0]?.usage).toEqual(usage);
      expect((await store.listRuns())[0]?.usage.inputTokens).toBe(200);
    });

    it('owes each hook call once per matching event; leases it to one worker; retries, then fails', async () => {
      const plan = chainPlan(1, {
        hooks: [
          { on: ['succeeded'], url: 'http://127.0.0.1:9/a' },
          { on: ['failed', 'succeeded'], command: ['notify'], retries: 1 },
        ],
      });
      await create(plan);
      const claimedFirst = await cycle(1000);
      // The cycle says when it wrote hook calls, so the engine delivers them without polling.
      expect(claimedFirst.hooksOwed).toBeUndefined();
      const [claim] = claimedFirst.claimed;
      expect((await cycle(1001, [done(claim!, 1001)])).hooksOwed).toBe(true);
      const other = await harness.reopen();
      try {
        const [mine, theirs] = await Promise.all([
          store.claimHookDeliveries('A', 1002, 60_000, 10),
          other.claimHookDeliveries('B', 1002, 60_000, 10),
        ]);
        const all = [...mine, ...theirs];
        expect(all.map((d) => d.hook).sort()).toEqual([0, 1]);
        expect(all.every((d) => d.event.type === 'run.succeeded' && d.runStatus === 'succeeded')).toBe(true);
        expect(all[0]?.spec.on).toContain('succeeded');
        // Leased: nobody gets them again while the lease holds.
        expect(await store.claimHookDeliveries('C', 1003, 60_000, 10)).toEqual([]);
        const url = all.find((d) => d.hook === 0)!;
        const command = all.find((d) => d.hook === 1)!;
        await store.finishHookDelivery(url, { ok: true }, 1004);
        await store.finishHookDelivery(command, { ok: false, error: 'exit 1', retryAt: 5000 }, 1004);
        expect(await store.claimHookDeliveries('C', 4999, 60_000, 10)).toEqual([]);
        const again = await other.claimHookDeliveries('C', 5000, 60_000, 10);
        expect(again.map((d) => [d.hook, d.attempts])).toEqual([[1, 1]]);
        await other.finishHookDelivery(again[0]!, { ok: false, error: 'exit 1', retryAt: null }, 5001);
        expect(await store.claimHookDeliveries('C', 99_999, 60_000, 10)).toEqual([]);
      } finally {
        await other.close();
      }
    });

    it("a running agent's held tool call, appended as an event, owes the plan's waiting hooks; other events owe none", async () => {
      const plan = chainPlan(1, {
        hooks: [
          { on: ['waiting'], url: 'http://127.0.0.1:9/w' },
          { on: ['failed'], url: 'http://127.0.0.1:9/f' },
        ],
      });
      await create(plan);
      await cycle(1000);
      const requested = {
        type: 'step.tool_approval_requested' as const,
        stepId: 's1',
        attempt: 1,
        callId: 'toolu_1',
        tool: 'Bash',
        digest: 'd'.repeat(64),
        summary: 'git push --force',
        timeoutAt: 9000,
      };
      await store.appendEvents(
        'run1',
        [{ type: 'step.heartbeat', stepId: 's1', attempt: 1, note: 'x' }, requested],
        1001,
      );
      const owed = await store.claimHookDeliveries('A', 1002, 60_000, 10);
      expect(owed.map((d) => [d.hook, d.event.type])).toEqual([[0, 'step.tool_approval_requested']]);
      expect(owed[0]!.event).toMatchObject({ callId: 'toolu_1', summary: 'git push --force' });
      // Its answer calls no hook.
      await store.appendEvents(
        'run1',
        [
          {
            type: 'step.tool_approval_decided',
            stepId: 's1',
            attempt: 1,
            callId: 'toolu_1',
            tool: 'Bash',
            digest: requested.digest,
            decision: 'allow',
            by: 'ann',
            comment: null,
          },
        ],
        1003,
      );
      expect(await store.claimHookDeliveries('B', 1004, 60_000, 10)).toEqual([]);
      await expect(store.appendEvents('nosuch', [requested], 1005)).rejects.toThrow(/nosuch/);
    });

    it('hands a step whose retries are used up to its fallback, and remembers it across handles', async () => {
      await create(
        chainPlan(1, {
          defaults: { retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 } },
          steps: [{ id: 's1', fn: 'noop', fallback: { fn: 'plain' } }],
        }),
      );
      const [first] = (await cycle(1000)).claimed;
      expect(first).toMatchObject({ step: { fn: 'noop' } });
      expect(first?.fallback).toBeUndefined();
      const failed = { ok: false as const, failureClass: 'agent_failed' as const, message: 'nope' };
      const after = await cycle(1001, [{ ...done(first!, 1001), outcome: failed }]);
      const other = await harness.reopen();
      try {
        const [fallback] =
          after.claimed.length > 0
            ? after.claimed
            : (
                await other.cycle({
                  owner: 'w2',
                  now: 1002,
                  leaseMs: 1000,
                  completions: [],
                  claimLimit: 10,
                  random,
                })
              ).claimed;
        expect(fallback).toMatchObject({ stepId: 's1', fallback: true, step: { kind: 'fn', fn: 'plain' } });
        const owner = fallback!.owner;
        await (owner === 'w1' ? store : other).cycle({
          owner,
          now: 1003,
          leaseMs: 1000,
          completions: [{ ...done(fallback!, 1003, owner) }],
          claimLimit: 0,
          random,
        });
        const run = await other.getRun('run1');
        expect(run?.steps[0]?.status).toBe('degraded');
        expect(run?.status).toBe('succeeded');
      } finally {
        await other.close();
      }
    });

    it('keeps step usage across reloads and stops a run at its token budget', async () => {
      await create(chainPlan(2, { limits: { maxTokens: 150 } }));
      const [a] = (await cycle(1000)).claimed;
      const usage = { inputTokens: 100, outputTokens: 60, costUsd: 0.01 };
      const next = await cycle(1001, [{ ...done(a!, 1001), outcome: { ...okOutcome, usage } }]);
      expect(next.claimed).toEqual([]);
      const other = await harness.reopen();
      try {
        const run = await other.getRun('run1');
        expect(run?.status).toBe('blocked');
        expect(run?.blockedReason).toMatch(/^budget: maxTokens 150 reached \(160 used\)/);
        expect(run?.steps[0]?.usage).toEqual(usage);
        expect(run?.steps[0]?.firstStartedAt).toBe(1000);
        expect((await other.getEvents('run1')).some((e) => e.type === 'budget.exceeded')).toBe(true);
      } finally {
        await other.close();
      }
    });

    /** A run of two independent steps with a 150-token budget; claims `a` (only). */
    const claimFirstOfTwo = async (concurrency: number) => {
      const plan = validatePlanObject(
        {
          name: 'budget',
          limits: { maxTokens: 150, concurrency },
          steps: [
            { id: 'a', fn: 'noop' },
            { id: 'b', fn: 'noop' },
          ],
        },
        'contract',
      );
      await create(plan);
      return (await cycle(1000, [], 1)).claimed[0];
    };
    /** Another worker's late report of the attempt: discarded, but its 160 tokens were spent. */
    const lateReport = (attempt: { runId: string; stepId: string; attempt: number }): Completion => ({
      ...done(attempt, 1001, 'w2'),
      outcome: { ...okOutcome, usage: { inputTokens: 100, outputTokens: 60, costUsd: 0 } },
    });

    it("counts a discarded attempt's tokens against the run's budget in the same cycle", async () => {
      const a = await claimFirstOfTwo(2);
      const late = lateReport(a!);
      // The cycle that records the spent tokens does not start `b` past the budget.
      const next = await cycle(1001, [late]);
      expect(next.accepted).toEqual([false]);
      expect(next.claimed).toEqual([]);
      expect((await store.getRun('run1'))?.status).toBe('blocked');
    });

    it("counts a discarded attempt's tokens against the run's budget at the next cycle", async () => {
      const a = await claimFirstOfTwo(1);
      expect(a?.stepId).toBe('a');
      const late = lateReport(a!);
      expect((await cycle(1001, [late], 0)).accepted).toEqual([false]);
      // The lease holder finishes `a`: the run has used 160 of its 150 tokens, so `b` never starts.
      const next = await cycle(1002, [done(a!, 1002)]);
      expect(next.accepted).toEqual([true]);
      expect(next.claimed).toEqual([]);
      const run = await store.getRun('run1');
      expect(run?.status).toBe('blocked');
      expect(run?.blockedReason).toMatch(/^budget: maxTokens 150 reached \(160 used\)/);
    });

    it("counts an attempt's tokens once when its report is sent again (the commit's acknowledgement was lost)", async () => {
      await create(chainPlan(2));
      const [a] = (await cycle(1000, [], 1)).claimed;
      const usage = { inputTokens: 100, outputTokens: 60, costUsd: 0.25 };
      const report = { ...done(a!, 1001), outcome: { ...okOutcome, usage } };
      expect((await cycle(1001, [report], 0)).accepted).toEqual([true]);
      // The engine could not tell the first commit happened, so the same report comes again.
      expect((await cycle(1002, [report], 0)).accepted).toEqual([false]);
      expect((await store.getRun('run1'))?.usage).toEqual(usage);
      const attempts = await store.getAttempts('run1', 's1');
      expect(attempts.map((x) => [x.attempt, x.outcome, x.usage])).toEqual([[1, 'succeeded', usage]]);
    });

    it('counts the tokens of a report that comes twice in one cycle once', async () => {
      await create(chainPlan(1));
      const [a] = (await cycle(1000, [], 1)).claimed;
      const usage = { inputTokens: 7, outputTokens: 3, costUsd: 0.5 };
      const report = { ...done(a!, 1001), outcome: { ...okOutcome, usage } };
      expect((await cycle(1001, [report, report], 0)).accepted).toEqual([true, false]);
      const run = await store.getRun('run1');
      expect(run?.usage).toEqual(usage);
      expect(run?.steps[0]?.usage).toEqual(usage);
    });

    it("records a late report's tokens on the attempt its reclaim marked interrupted, once", async () => {
      await create(chainPlan(1));
      const [claim] = (await cycle(1000, [], 10, 'slow')).claimed;
      expect((await cycle(2001, [], 0, 'other')).reclaimed).toHaveLength(1);
      const usage = { inputTokens: 40, outputTokens: 2, costUsd: 0.5 };
      const late = { ...done(claim!, 2002, 'slow'), outcome: { ...okOutcome, usage } };
      expect((await cycle(2002, [late], 0)).accepted).toEqual([false]);
      expect((await cycle(2003, [late], 0)).accepted).toEqual([false]);
      expect((await store.getRun('run1'))?.usage).toEqual(usage);
      const [first] = await store.getAttempts('run1', 's1');
      expect(first).toMatchObject({ attempt: 1, outcome: 'interrupted', usage });
    });

    it("counts a discarded attempt's tokens against its step's own budget", async () => {
      const plan = validatePlanObject(
        { name: 'step-budget', steps: [{ id: 's1', fn: 'noop', budget: { maxTokens: 150 } }] },
        'contract',
      );
      await create(plan);
      const [first] = (await cycle(1000, [], 10, 'slow')).claimed;
      const [second] = (await cycle(2001, [], 10, 'other')).claimed;
      expect(second).toMatchObject({ stepId: 's1', attempt: 2 });
      const usage = { inputTokens: 100, outputTokens: 60, costUsd: 0 };
      const late = { ...done(first!, 2002, 'slow'), outcome: { ...okOutcome, usage } };
      expect((await cycle(2002, [late], 0)).accepted).toEqual([false]);
      expect((await store.getRun('run1'))?.steps[0]?.usage).toEqual(usage);
      // The second attempt fails in a way worth retrying, but the step has spent 160 of its 150 tokens.
      const failed = { ok: false as const, failureClass: 'transient' as const, message: 'try again' };
      await cycle(2003, [{ ...done(second!, 2003, 'other'), outcome: failed }], 0, 'other');
      const step = (await store.getRun('run1'))?.steps[0];
      expect(step).toMatchObject({ status: 'blocked', lastFailureClass: 'budget', usage });
    });

    it('gc: deletes runs finished before the cutoff (not blocked ones) and lists referenced artifacts', async () => {
      await create(chainPlan(1), 'old', 1000);
      await create(chainPlan(1), 'blocked', 1000);
      const claims = (await cycle(1001)).claimed;
      const ref = { sha256: 'f'.repeat(64), size: 70_000 };
      const old = claims.find((c) => c.runId === 'old')!;
      const blocked = claims.find((c) => c.runId === 'blocked')!;
      await cycle(1002, [
        { ...done(old, 1002), outcome: { ...okOutcome, resultRef: ref } },
        { ...done(blocked, 1002), outcome: { ok: false, failureClass: 'fatal', message: 'no' } },
      ]);
      await create(chainPlan(1), 'recent', 5000);
      expect([...(await store.referencedResultArtifacts())]).toEqual([ref.sha256]);
      expect(await store.deleteFinishedRuns(3000, { dryRun: true })).toEqual(['old']);
      expect(await store.getRun('old')).not.toBeNull();
      expect(await store.deleteFinishedRuns(3000)).toEqual(['old']);
      expect(await store.getRun('old')).toBeNull();
      expect((await store.listRuns()).map((r) => r.id).sort()).toEqual(['blocked', 'recent']);
      expect(await store.referencedResultArtifacts()).toEqual(new Set());
    });

    it('drops the report of an attempt whose run gc deleted while it ran; the cycle commits the others', async () => {
      await create(chainPlan(1), 'gone', 1000);
      await create(chainPlan(1), 'other', 1000);
      const claims = (await cycle(1001)).claimed;
      expect(claims.map((c) => c.runId).sort()).toEqual(['gone', 'other']);
      // Cancelled while its step ran (the step keeps its lease), then removed by gc at once.
      await store.cancelRun('gone', 1002);
      expect(await store.deleteFinishedRuns(1003)).toEqual(['gone']);
      const reports = ['gone', 'other'].map((id) => done(claims.find((c) => c.runId === id)!, 1004));
      // Before: the attempt row of the deleted run broke a foreign key and failed this cycle, and
      // every next one, which held the report again, until the engine gave up.
      expect((await cycle(1004, reports, 0)).accepted).toEqual([false, true]);
      expect((await store.getRun('other'))?.status).toBe('succeeded');
      expect(await store.getRun('gone')).toBeNull();
      expect(await store.getAttempts('gone')).toEqual([]);
    });

    /**
     * Run R, its attempt 1 claimed by 'old', cancelled and removed by gc while it ran; then R
     * created again at 2000, its attempt 1 claimed by 'new'.
     */
    const recreatedRun = async () => {
      await create(chainPlan(1), 'R', 1000);
      const [old] = (await cycle(1001, [], 10, 'old')).claimed;
      await store.cancelRun('R', 1002);
      expect(await store.deleteFinishedRuns(1003)).toEqual(['R']);
      await create(chainPlan(1), 'R', 2000);
      const [fresh] = (await cycle(2001, [], 10, 'new')).claimed;
      return { old: old!, fresh: fresh! };
    };

    it('a late report of a deleted run takes neither the attempt row nor the tokens of the run created again with its id', async () => {
      const { old, fresh } = await recreatedRun();
      expect(fresh).toMatchObject({ stepId: old.stepId, attempt: old.attempt });
      const report = (owner: string, startedAt: number, inputTokens: number): Completion => ({
        ...done(old, 2002, owner),
        startedAt,
        outcome: { ...okOutcome, usage: { inputTokens, outputTokens: 0, costUsd: 0 } },
      });
      // The deleted run's worker reports its attempt 1 (begun at 1001) while the new run's runs.
      expect((await cycle(2002, [report('old', 1001, 1000)], 0, 'old')).accepted).toEqual([false]);
      expect((await cycle(2003, [report('new', 2001, 5)], 0, 'new')).accepted).toEqual([true]);
      const attempts = await store.getAttempts('R');
      expect(attempts.map((a) => [a.owner, a.outcome, a.usage?.inputTokens])).toEqual([
        ['new', 'succeeded', 5],
      ]);
      const run = await store.getRun('R');
      expect(run?.usage.inputTokens).toBe(5);
      expect(run?.status).toBe('succeeded');
    });

    it('a late report of a deleted run, after the new run finished that attempt without tokens, counts none', async () => {
      const { old, fresh } = await recreatedRun();
      expect((await cycle(2002, [done(fresh, 2002, 'new')], 0, 'new')).accepted).toEqual([true]);
      // Its start time is no help here (the old worker's clock may run behind); the row's owner is.
      const late: Completion = {
        ...done(old, 2003, 'old'),
        outcome: { ...okOutcome, usage: { inputTokens: 700, outputTokens: 0, costUsd: 0 } },
      };
      expect((await cycle(2003, [late], 0, 'old')).accepted).toEqual([false]);
      const attempts = await store.getAttempts('R');
      expect(attempts.map((a) => [a.owner, a.outcome, a.usage?.inputTokens ?? null])).toEqual([
        ['new', 'succeeded', null],
      ]);
      expect((await store.getRun('R'))?.usage.inputTokens).toBe(0);
    });

    it('gc in batches: each takes at most `limit` runs after `afterId`, in id order, and keeps the rest', async () => {
      for (const id of ['a', 'b', 'c', 'd', 'e']) {
        await create(chainPlan(1), id, 1000);
        await store.cancelRun(id, 1001);
      }
      await create(chainPlan(1), 'live', 1000);
      expect(await store.deleteFinishedRuns(3000, { dryRun: true, limit: 2, afterId: 'a' })).toEqual([
        'b',
        'c',
      ]);
      expect(await store.deleteFinishedRuns(3000, { limit: 2 })).toEqual(['a', 'b']);
      expect(await store.deleteFinishedRuns(3000, { limit: 2, afterId: 'b' })).toEqual(['c', 'd']);
      expect(await store.deleteFinishedRuns(3000, { limit: 2, afterId: 'd' })).toEqual(['e']);
      expect(await store.deleteFinishedRuns(3000, { limit: 2, afterId: 'e' })).toEqual([]);
      expect((await store.listRuns()).map((r) => r.id)).toEqual(['live']);
    });
  });
}
