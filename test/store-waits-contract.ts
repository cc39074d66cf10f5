import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { Plan } from '../src/core/plan/types.js';
import type { Completion, Store } from '../src/store/store.js';
import type { StoreHarness } from './store-contract.js';

/**
 * Steps that wait for a person or an event (core/waits.ts), on every store: they wait without a
 * lease, approvals, rejections and events end them through the human-command path, events sent
 * early are kept (the first wins), and timeouts fire from the due machinery. Nouns: `EventStore`
 * (src/store/contract/events.ts: `sendEvent`, `listWaitingSteps`) and `RunCommands` (approve, reject).
 */
const random = () => 0;

function approvalPlan(wait: Record<string, unknown> = {}): Plan {
  return validatePlanObject(
    {
      name: 'report',
      inputs: { x: {} },
      steps: [
        { id: 'draft', fn: 'noop' },
        {
          id: 'approve-send',
          dependsOn: ['draft'],
          wait: { for: 'approval', prompt: 'Send report {{inputs.x}}?', ...wait },
        },
        { id: 'send', fn: 'noop', dependsOn: ['approve-send'] },
        { id: 'archive', fn: 'noop', dependsOn: ['send'] },
        { id: 'other', fn: 'noop', dependsOn: ['draft'] },
      ],
    },
    'waits',
  );
}

function eventPlan(wait: Record<string, unknown> = {}): Plan {
  return validatePlanObject(
    {
      name: 'deploy',
      inputs: { x: {} },
      steps: [
        { id: 'build', fn: 'noop' },
        {
          id: 'deployed',
          dependsOn: ['build'],
          wait: { for: 'event', event: 'deployed-{{inputs.x}}', ...wait },
        },
        { id: 'announce', fn: 'noop', dependsOn: ['deployed'] },
      ],
    },
    'waits',
  );
}

const codeOf = (error: unknown) => (isBatonError(error) ? error.code : String(error));

export function describeWaitsContract(name: string, makeHarness: () => StoreHarness): void {
  describe(`Store waits contract: ${name}`, () => {
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

    const create = (plan: Plan, id = 'run1', now = 1000, x = '1') =>
      store.createRun({ id, plan, planHash: 'h', inputs: { x }, workspace: '/ws', now });
    const cycle = (now: number, completions: Completion[] = [], claimLimit = 10) =>
      store.cycle({ owner: 'w1', now, leaseMs: 100_000, completions, claimLimit, random });
    const done = (c: { runId: string; stepId: string; attempt: number }, now: number): Completion => ({
      ...c,
      owner: 'w1',
      outcome: { ok: true, summary: 'fine', outputs: [] },
      startedAt: now - 1,
      endedAt: now,
      logPath: null,
    });
    const stepOf = async (stepId: string, runId = 'run1') =>
      (await store.getRun(runId))!.steps.find((step) => step.stepId === stepId)!;
    /** Runs the first step and completes it; the wait step starts waiting in a later cycle. */
    const finishFirst = async (runId = 'run1', now = 1000) => {
      const claimed = (await cycle(now)).claimed.filter((c) => c.runId === runId);
      const second = await cycle(
        now + 10,
        claimed.map((c) => done(c, now + 10)),
      );
      return [...second.claimed, ...(await cycle(now + 20)).claimed];
    };

    it('a due approval waits without a lease, counts as waiting, and an approval releases the steps after it', async () => {
      await create(approvalPlan());
      const claimed = await finishFirst();
      expect(claimed.map((c) => c.stepId)).not.toContain('approve-send');
      const waiting = await stepOf('approve-send');
      expect(waiting).toMatchObject({
        status: 'waiting',
        leaseOwner: null,
        dueAt: null,
        waitingFor: 'Send report 1?',
      });
      const run = (await store.getRun('run1'))!;
      expect(run.status).toBe('running');
      expect(run.stepCounts.waiting).toBe(1);
      // No timeout: nothing is due for it, however late.
      expect((await cycle(10_000_000)).claimed.map((c) => c.stepId)).not.toContain('approve-send');

      const summary = await store.approveStep(
        'run1',
        'approve-send',
        { by: 'ann', comment: 'ship it' },
        2000,
      );
      expect(summary.status).toBe('running');
      const approved = await stepOf('approve-send');
      expect(approved.status).toBe('succeeded');
      expect(JSON.parse(approved.resultJson!).value).toEqual({
        approved: true,
        by: 'ann',
        comment: 'ship it',
        at: new Date(2000).toISOString(),
      });
      expect((await cycle(2001)).claimed.map((c) => c.stepId)).toEqual(['send']);
      const types = (await store.getEvents('run1')).map((e) => e.type);
      expect(types).toContain('step.waiting');
      expect(types).toContain('step.approved');
      // Approved once: a second decision is refused, through another handle too.
      const other = await harness.reopen();
      try {
        await expect(other.approveStep('run1', 'approve-send', { by: 'bob' }, 2002)).rejects.toSatisfy(
          (e) => codeOf(e) === 'INVALID_TRANSITION',
        );
        await expect(other.rejectStep('run1', 'approve-send', { by: 'bob' }, 2002)).rejects.toSatisfy(
          (e) => codeOf(e) === 'INVALID_TRANSITION',
        );
      } finally {
        await other.close();
      }
    });

    it('a rejection skips every step after it with the reason; the rest of the run goes on and ends', async () => {
      await create(approvalPlan());
      const other = (await finishFirst()).find((c) => c.stepId === 'other')!;
      await store.rejectStep('run1', 'approve-send', { by: 'ann', comment: 'numbers are off' }, 2000);
      for (const stepId of ['approve-send', 'send', 'archive'])
        expect((await stepOf(stepId)).status).toBe('skipped');
      expect(JSON.parse((await stepOf('approve-send')).resultJson!).value).toMatchObject({
        approved: false,
        by: 'ann',
      });
      const skipped = (await store.getEvents('run1')).filter((e) => e.type === 'step.skipped');
      expect(skipped.map((e) => e.type === 'step.skipped' && e.reason)).toEqual([
        'step approve-send was rejected by ann: numbers are off',
        'step approve-send was rejected by ann: numbers are off',
      ]);
      expect((await cycle(2001)).claimed.map((c) => c.stepId)).toEqual([]);
      await cycle(2002, [done(other, 2002)]);
      expect((await store.getRun('run1'))!.status).toBe('succeeded');
    });

    it('after a rejection a step that says so with when decides for itself: it runs on the rejection', async () => {
      const plan = approvalPlan();
      const withWhen = validatePlanObject(
        {
          ...JSON.parse(JSON.stringify({ name: plan.name, inputs: { x: {} } })),
          steps: [
            { id: 'draft', fn: 'noop' },
            { id: 'approve-send', dependsOn: ['draft'], wait: { for: 'approval' } },
            { id: 'send', fn: 'noop', dependsOn: ['approve-send'] },
            {
              id: 'tell-author',
              fn: 'noop',
              dependsOn: ['approve-send'],
              when: 'steps["approve-send"].result.approved == false',
            },
          ],
        },
        'waits',
      );
      await create(withWhen);
      const draft = (await cycle(1000)).claimed[0]!;
      await cycle(1001, [done(draft, 1001)]);
      expect((await stepOf('approve-send')).status).toBe('waiting');
      await store.rejectStep('run1', 'approve-send', { by: 'ann', comment: null }, 2000);
      expect((await stepOf('send')).status).toBe('skipped');
      const claimed = (await cycle(2001)).claimed;
      expect(claimed.map((c) => c.stepId)).toEqual(['tell-author']);
      await cycle(2002, [done(claimed[0]!, 2002)]);
      expect((await store.getRun('run1'))!.status).toBe('succeeded');
    });

    it('refuses a decision for an unknown run, a step that is not waiting, or the wrong kind of wait', async () => {
      await create(approvalPlan());
      await expect(store.approveStep('nope', 'approve-send', { by: 'a' }, 1)).rejects.toSatisfy(
        (e) => codeOf(e) === 'RUN_NOT_FOUND',
      );
      // Not waiting yet (its dependency has not run).
      await expect(store.approveStep('run1', 'approve-send', { by: 'a' }, 1)).rejects.toSatisfy(
        (e) => codeOf(e) === 'INVALID_TRANSITION',
      );
      await expect(store.approveStep('run1', 'send', { by: 'a' }, 1)).rejects.toSatisfy(
        (e) => codeOf(e) === 'INVALID_TRANSITION',
      );
      await expect(store.sendEvent({ event: 'x', dataJson: '1', runId: 'run1' }, 1)).rejects.toSatisfy(
        (e) => codeOf(e) === 'INVALID_TRANSITION',
      );
      await expect(store.sendEvent({ event: 'x', dataJson: '1', runId: 'nope' }, 1)).rejects.toSatisfy(
        (e) => codeOf(e) === 'RUN_NOT_FOUND',
      );
      // Nothing was stored by the refusals.
      expect((await store.getEvents('run1')).map((e) => e.type)).toEqual(['run.created']);
    });

    it('an event sent before its step waits is kept (the first wins) and taken when the step starts waiting', async () => {
      await create(eventPlan());
      expect(
        await store.sendEvent({ event: 'deployed-1', dataJson: '{"n":1}', runId: 'run1' }, 1001),
      ).toEqual([{ runId: 'run1', stepId: null, outcome: 'kept' }]);
      expect(
        await store.sendEvent({ event: 'deployed-1', dataJson: '{"n":2}', runId: 'run1' }, 1002),
      ).toEqual([{ runId: 'run1', stepId: null, outcome: 'dropped' }]);
      await finishFirst('run1', 1100);
      const step = await stepOf('deployed');
      expect(step.status).toBe('succeeded');
      expect(JSON.parse(step.resultJson!).value).toEqual({ n: 1 });
      const received = (await store.getEvents('run1')).find((e) => e.type === 'event.received');
      expect(received).toMatchObject({ stepId: 'deployed', event: 'deployed-1', kept: true });
      // Taken in the cycle that made the step due: the step after it was claimed in the same one.
      expect((await stepOf('announce')).status).toBe('running');
      // Its step took an event already: another is refused, nothing kept for it.
      await expect(
        store.sendEvent({ event: 'deployed-1', dataJson: '3', runId: 'run1' }, 1300),
      ).rejects.toSatisfy((e) => codeOf(e) === 'INVALID_TRANSITION');
    });

    it('an event without a run goes to every run waiting for that name, once', async () => {
      await create(eventPlan(), 'run1', 1000, 'a');
      await create(eventPlan(), 'run2', 1000, 'a');
      await create(eventPlan(), 'run3', 1000, 'b');
      const claimed = (await cycle(1000)).claimed;
      await cycle(
        1010,
        claimed.map((c) => done(c, 1010)),
      );
      await cycle(1020);
      expect((await stepOf('deployed', 'run3')).waitingFor).toBe('deployed-b');
      const deliveries = await store.sendEvent({ event: 'deployed-a', dataJson: '"v2"' }, 1030);
      expect(deliveries).toEqual([
        { runId: 'run1', stepId: 'deployed', outcome: 'received' },
        { runId: 'run2', stepId: 'deployed', outcome: 'received' },
      ]);
      expect(JSON.parse((await stepOf('deployed', 'run2')).resultJson!).value).toBe('v2');
      expect((await stepOf('deployed', 'run3')).status).toBe('waiting');
      await expect(store.sendEvent({ event: 'deployed-a', dataJson: '1' }, 1040)).rejects.toSatisfy(
        (e) => codeOf(e) === 'INVALID_TRANSITION',
      );
    });

    it('a timeout is the waiting step’s due time: skip lets the steps after it run', async () => {
      await create(eventPlan({ timeout: '1m', onTimeout: 'skip' }));
      await finishFirst('run1', 1000);
      // It started waiting in the cycle that completed its dependency (at 1010).
      expect(await stepOf('deployed')).toMatchObject({ status: 'waiting', dueAt: 1010 + 60_000 });
      expect(await store.nextWakeAt()).toBe(1010 + 60_000);
      await cycle(1010 + 59_999);
      expect((await stepOf('deployed')).status).toBe('waiting');
      await cycle(1010 + 60_000);
      expect((await stepOf('deployed')).status).toBe('skipped');
      await cycle(1010 + 60_001);
      expect((await stepOf('announce')).status).toBe('running');
    });

    it('a timeout that blocks leaves the approval open: approving it later goes on', async () => {
      await create(approvalPlan({ timeout: '2026-01-01T00:00:00+08:00' }));
      await finishFirst('run1', 1000);
      const deadline = Date.parse('2026-01-01T00:00:00+08:00');
      expect((await stepOf('approve-send')).dueAt).toBe(deadline);
      await cycle(deadline);
      const blocked = await stepOf('approve-send');
      expect(blocked.status).toBe('blocked');
      expect(blocked.blockedReason).toContain('baton approve run1 approve-send');
      await store.approveStep('run1', 'approve-send', { by: 'ann' }, deadline + 1);
      expect((await stepOf('approve-send')).status).toBe('succeeded');
      expect((await cycle(deadline + 2)).claimed.map((c) => c.stepId)).toContain('send');
    });

    it('a timeout fires in a cycle that claims nothing (a worker with no slot free)', async () => {
      await create(approvalPlan({ timeout: '1s', onTimeout: 'reject' }));
      await finishFirst('run1', 1000);
      expect((await stepOf('approve-send')).status).toBe('waiting');
      const result = await cycle(1010 + 1000, [], 0);
      expect(result.claimed).toEqual([]);
      expect(result.settledUnclaimed).toBe(true);
      expect((await stepOf('approve-send')).status).toBe('skipped');
      expect((await stepOf('send')).status).toBe('skipped');
    });

    it('a timeout fires in a run blocked by another step', async () => {
      await create(approvalPlan({ timeout: '1s', onTimeout: 'reject' }));
      const claimed = await finishFirst('run1', 1000);
      const other = claimed.find((c) => c.stepId === 'other')!;
      await cycle(1030, [
        { ...done(other, 1030), outcome: { ok: false, failureClass: 'fatal', message: 'no access' } },
      ]);
      expect((await store.getRun('run1'))!.status).toBe('blocked');
      expect((await stepOf('approve-send')).status).toBe('waiting');
      // An idle worker wakes for it: its timeout is the next due time, blocked run or not.
      expect(await store.nextWakeAt()).toBe(1010 + 1000);
      expect(await store.nextWakeAt({ runId: 'run1' })).toBe(1010 + 1000);
      await cycle(1010 + 1000);
      expect((await stepOf('approve-send')).status).toBe('skipped');
      expect((await stepOf('send')).status).toBe('skipped');
      const timedOut = (await store.getEvents('run1')).find((e) => e.type === 'step.wait_timed_out');
      expect(timedOut).toMatchObject({ stepId: 'approve-send', action: 'reject' });
      // The step that blocked it still holds the run for a person.
      expect((await store.getRun('run1'))!.status).toBe('blocked');
    });

    it('a wait made due by a completion starts waiting in a cycle that claims nothing', async () => {
      await create(eventPlan());
      await store.sendEvent({ event: 'deployed-1', dataJson: '{"n":1}', runId: 'run1' }, 1001);
      const build = (await cycle(1000, [], 1)).claimed[0]!;
      const result = await cycle(1010, [done(build, 1010)], 0);
      expect(result.claimed).toEqual([]);
      // It started waiting and took the event kept for it, in that same cycle.
      const step = await stepOf('deployed');
      expect(step.status).toBe('succeeded');
      expect(JSON.parse(step.resultJson!).value).toEqual({ n: 1 });
      expect((await stepOf('announce')).status).toBe('ready');
    });

    it('a wait a decision made due starts waiting in a cycle that claims nothing', async () => {
      const plan = validatePlanObject(
        {
          name: 'two-approvals',
          defaults: { flowKey: 'team' },
          steps: [
            { id: 'legal', wait: { for: 'approval', prompt: 'Legal?' } },
            { id: 'boss', dependsOn: ['legal'], wait: { for: 'approval', prompt: 'Boss?' } },
            { id: 'send', fn: 'noop', dependsOn: ['boss'] },
          ],
        },
        'waits',
      );
      await create(plan);
      await cycle(1000);
      expect((await stepOf('legal')).status).toBe('waiting');
      await store.approveStep('run1', 'legal', { by: 'ann' }, 2000);
      expect((await stepOf('boss')).status).toBe('ready');
      // A worker with every slot busy: its cycles claim nothing, and boss still starts waiting.
      const result = await cycle(2001, [], 0);
      expect(result.claimed).toEqual([]);
      expect(await stepOf('boss')).toMatchObject({ status: 'waiting', waitingFor: 'Boss?' });
    });

    it('a wait due in a cycle whose claims ran out starts waiting in it', async () => {
      const plan = validatePlanObject(
        {
          name: 'busy',
          steps: [
            { id: 'long', fn: 'noop' },
            { id: 'ask', wait: { for: 'approval', prompt: 'Go?' } },
          ],
        },
        'waits',
      );
      await create(plan);
      expect((await cycle(1000, [], 1)).claimed.map((c) => c.stepId)).toEqual(['long']);
      expect(await stepOf('ask')).toMatchObject({ status: 'waiting', waitingFor: 'Go?' });
    });

    /**
     * A run at its concurrency (limits.concurrency 1) whose one slot another owner's long step
     * holds: a wait made due by time (its delay, then its timeout) moves in any cycle, the one just
     * after the look for due waits too; it needs no slot.
     */
    it('a wait in a run at its concurrency starts and times out in the next cycle, the slot still held', async () => {
      const plan = validatePlanObject(
        {
          name: 'full',
          limits: { concurrency: 1 },
          steps: [
            { id: 'long', fn: 'noop' },
            {
              id: 'ask',
              delayBeforeMs: 500,
              wait: { for: 'approval', prompt: 'Go?', timeout: '2s', onTimeout: 'skip' },
            },
            { id: 'after', fn: 'noop', dependsOn: ['ask'] },
          ],
        },
        'waits',
      );
      await create(plan);
      const other = await harness.reopen();
      try {
        const held = await other.cycle({
          owner: 'w2',
          now: 1000,
          leaseMs: 100_000,
          completions: [],
          claimLimit: 1,
          random,
        });
        expect(held.claimed.map((c) => c.stepId)).toEqual(['long']);
        // This handle's cycles: the first looks for due waits (nothing due yet), the next ones
        // come within the look's interval.
        await cycle(1001);
        expect((await stepOf('ask')).status).toBe('ready');
        // A sleeping worker wakes for it: its due time counts, the run at its concurrency or not.
        expect(await store.nextWakeAt()).toBe(1500);
        await cycle(1500);
        expect(await stepOf('ask')).toMatchObject({ status: 'waiting', waitingFor: 'Go?', dueAt: 3500 });
        expect(await store.nextWakeAt()).toBe(3500);
        await cycle(2600);
        await cycle(3500);
        expect((await stepOf('ask')).status).toBe('skipped');
        // The long step still holds the run's one slot: nothing else was claimed.
        expect((await stepOf('long')).status).toBe('running');
        expect((await stepOf('after')).status).toBe('ready');
        const types = (await store.getEvents('run1')).map((e) => e.type);
        expect(types.filter((t) => t === 'step.waiting')).toHaveLength(1);
        expect(types.filter((t) => t === 'step.wait_timed_out')).toHaveLength(1);
      } finally {
        await other.close();
      }
    });

    it('a wait beside a step holding its flow key’s one slot starts and times out in the next cycle', async () => {
      const plan = validatePlanObject(
        {
          name: 'flow-full',
          defaults: { flowKey: 'team' },
          steps: [
            { id: 'long', fn: 'noop' },
            { id: 'next', fn: 'noop' },
            {
              id: 'ask',
              delayBeforeMs: 500,
              wait: { for: 'approval', prompt: 'Go?', timeout: '2s', onTimeout: 'skip' },
            },
          ],
        },
        'waits',
      );
      await store.setFlowLimit({ key: 'team', concurrency: 1, rate: null }, 900);
      await create(plan);
      expect((await cycle(1000)).claimed.map((c) => c.stepId)).toEqual(['long']);
      await cycle(1500);
      expect((await stepOf('ask')).status).toBe('waiting');
      await cycle(3500);
      expect((await stepOf('ask')).status).toBe('skipped');
      expect((await stepOf('next')).status).toBe('ready');
    });

    it('two handles cycling at once move a due wait of a run at its concurrency once', async () => {
      const plan = validatePlanObject(
        {
          name: 'full',
          limits: { concurrency: 1 },
          steps: [
            { id: 'long', fn: 'noop' },
            { id: 'ask', delayBeforeMs: 500, wait: { for: 'approval', prompt: 'Go?' } },
          ],
        },
        'waits',
      );
      await create(plan);
      const other = await harness.reopen();
      try {
        const at = (now: number, on: Store, owner: string) =>
          on.cycle({ owner, now, leaseMs: 100_000, completions: [], claimLimit: 4, random });
        // Both handles look for due waits once before the wait is due.
        await Promise.all([at(1000, store, 'w1'), at(1000, other, 'w2')]);
        expect((await stepOf('long')).status).toBe('running');
        await Promise.all([at(1500, store, 'w1'), at(1500, other, 'w2')]);
        expect((await stepOf('ask')).status).toBe('waiting');
        const types = (await store.getEvents('run1')).map((e) => e.type);
        expect(types.filter((t) => t === 'step.waiting')).toHaveLength(1);
      } finally {
        await other.close();
      }
    });

    it('a timeout that rejects skips the steps after it', async () => {
      await create(approvalPlan({ timeout: '1s', onTimeout: 'reject' }));
      await finishFirst('run1', 1000);
      await cycle(1010 + 1000);
      expect((await stepOf('approve-send')).status).toBe('skipped');
      expect((await stepOf('send')).status).toBe('skipped');
      expect(JSON.parse((await stepOf('approve-send')).resultJson!).value).toMatchObject({
        approved: false,
        by: 'timeout',
      });
    });
  });
}
