import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { DELIVERIES_KEPT, type NewTrigger, type Store } from '../src/store/store.js';
import type { StoreHarness } from './store-contract.js';

/**
 * Webhook triggers on every store: stored with their plan snapshot, never a secret; a name is added
 * once; paused and resumed; removed with their deliveries; deliveries listed newest first and kept
 * to the newest DELIVERIES_KEPT of each trigger (a flood of refused deliveries cannot grow the
 * table). Noun: `TriggerStore` (src/store/contract/triggers.ts).
 */
const plan = validatePlanObject(
  { name: 'triage', inputs: { title: {} }, steps: [{ id: 'read', fn: 'noop' }] },
  'triggers',
);
const T0 = Date.parse('2026-12-07T00:00:00Z');
const codeOf = (error: unknown) => (isBatonError(error) ? error.code : String(error));

function trigger(name: string, extra: Partial<NewTrigger> = {}): NewTrigger {
  return {
    name,
    source: 'github',
    secretEnv: 'GH_HOOK_SECRET',
    when: 'body.action == "opened"',
    inputs: { title: '{{body.issue.title}}' },
    plan,
    planHash: 'h1',
    workspace: '/tmp/work',
    propose: false,
    labels: { team: 'growth' },
    paused: false,
    now: T0,
    ...extra,
  };
}

export function describeTriggersContract(name: string, makeHarness: () => StoreHarness): void {
  describe(`Store triggers contract: ${name}`, () => {
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

    it('stores a trigger with its plan once, pauses, resumes and removes it with its deliveries', async () => {
      const added = await store.addTrigger(trigger('issues'));
      expect(added).toMatchObject({
        name: 'issues',
        source: 'github',
        secretEnv: 'GH_HOOK_SECRET',
        when: 'body.action == "opened"',
        inputs: { title: '{{body.issue.title}}' },
        planName: 'triage',
        propose: false,
        labels: { team: 'growth' },
        paused: false,
        createdAt: T0,
      });
      await expect(store.addTrigger(trigger('issues'))).rejects.toSatisfy(
        (error) => codeOf(error) === 'TRIGGER_EXISTS',
      );
      await store.addTrigger(
        trigger('billing', { source: 'stripe', when: null, paused: true, propose: true }),
      );
      expect((await store.listTriggers()).map((t) => [t.name, t.paused, t.propose])).toEqual([
        ['billing', true, true],
        ['issues', false, false],
      ]);
      expect((await store.getTrigger('issues'))?.plan).toEqual(plan);
      expect(await store.getTrigger('nothing')).toBeNull();
      expect((await store.setTriggerPaused('issues', true, T0 + 5)).paused).toBe(true);
      expect(await store.setTriggerPaused('issues', false, T0 + 6)).toMatchObject({
        paused: false,
        updatedAt: T0 + 6,
      });
      await expect(store.setTriggerPaused('nothing', true, T0)).rejects.toSatisfy(
        (error) => codeOf(error) === 'TRIGGER_NOT_FOUND',
      );
      await store.recordTriggerDelivery({
        trigger: 'issues',
        deliveryId: 'd1',
        outcome: 'started',
        runId: 'issues-d1',
        reason: null,
        receivedAt: T0 + 10,
      });
      expect(await store.removeTrigger('issues')).toBe(true);
      expect(await store.removeTrigger('issues')).toBe(false);
      expect(await store.listTriggerDeliveries('issues')).toEqual([]);
      // Added again under the same name: no deliveries of the old one come back.
      await store.addTrigger(trigger('issues'));
      expect(await store.listTriggerDeliveries('issues')).toEqual([]);
    });

    it('lists deliveries newest first and keeps the newest DELIVERIES_KEPT of each trigger', async () => {
      await store.addTrigger(trigger('a'));
      await store.addTrigger(trigger('b'));
      for (let i = 0; i < DELIVERIES_KEPT + 5; i += 1) {
        await store.recordTriggerDelivery({
          trigger: 'a',
          deliveryId: null,
          outcome: 'refused',
          runId: null,
          reason: 'bad signature',
          receivedAt: T0 + i,
        });
        if (i % 50 === 0)
          await store.recordTriggerDelivery({
            trigger: 'b',
            deliveryId: `d${i}`,
            outcome: 'started',
            runId: `b-d${i}`,
            reason: null,
            receivedAt: T0 + i,
          });
      }
      const all = await store.listTriggerDeliveries('a', 1000);
      expect(all).toHaveLength(DELIVERIES_KEPT);
      expect(all[0]).toEqual({
        trigger: 'a',
        deliveryId: null,
        outcome: 'refused',
        runId: null,
        reason: 'bad signature',
        receivedAt: T0 + DELIVERIES_KEPT + 4,
      });
      expect(all.at(-1)!.receivedAt).toBe(T0 + 5);
      expect((await store.listTriggerDeliveries('a')).length).toBe(20);
      expect((await store.listTriggerDeliveries('b', 100)).map((d) => d.deliveryId)).toEqual([
        'd200',
        'd150',
        'd100',
        'd50',
        'd0',
      ]);
    });
  });
}
