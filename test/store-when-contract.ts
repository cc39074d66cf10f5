import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { Plan } from '../src/core/plan/types.js';
import type { ClaimedStep, Completion, Store } from '../src/store/store.js';
import type { StoreHarness } from './store-contract.js';

/**
 * A step's `when`, on every store: decided by the core when the step is first claimed, over its
 * dependencies' results and statuses and the run's inputs. False skips it with the reason and its
 * dependents go on; a condition that cannot be decided blocks it `invalid`. Noun: `ClaimStore`
 * (src/store/contract/claims.ts).
 */

/** The daily competitor report: fix-report runs only when the quality check failed. */
function reportPlan(fixWhen = 'steps.check.result.passed == false'): Plan {
  return validatePlanObject(
    {
      name: 'daily-competitor-report',
      inputs: { region: { default: 'eu' } },
      steps: [
        { id: 'fetch', fn: 'fetch' },
        { id: 'check', fn: 'check', dependsOn: ['fetch'] },
        { id: 'fix-report', fn: 'fix', dependsOn: ['check'], when: fixWhen },
        { id: 'send', fn: 'send', dependsOn: ['fix-report'] },
        { id: 'archive', fn: 'archive', dependsOn: ['send'], when: 'steps.send.status == "succeeded"' },
        { id: 'translate', fn: 'translate', when: 'inputs.region != "eu"' },
      ],
    },
    'report.json',
  );
}

export function describeWhenContract(name: string, makeHarness: () => StoreHarness): void {
  describe(`Store contract, when: ${name}`, () => {
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

    /** Runs `runId` to the end: every claimed step succeeds with the value `values` gives it. */
    async function runToEnd(runId: string, values: Record<string, unknown>): Promise<string[]> {
      const ran: string[] = [];
      let now = 2000;
      let completions: Completion[] = [];
      for (let cycle = 0; cycle < 20; cycle++) {
        const result = await store.cycle({
          owner: 'w1',
          now,
          leaseMs: 10_000,
          completions,
          claimLimit: 10,
          random: () => 0,
        });
        now += 10;
        completions = result.claimed.map((claim: ClaimedStep) => {
          ran.push(claim.stepId);
          return {
            runId: claim.runId,
            stepId: claim.stepId,
            attempt: claim.attempt,
            owner: 'w1',
            outcome: { ok: true, summary: `${claim.stepId} done`, outputs: [], value: values[claim.stepId] },
            startedAt: now - 5,
            endedAt: now,
            logPath: null,
          };
        });
        if (completions.length === 0 && result.claimed.length === 0) {
          const run = await store.getRun(runId);
          if (run?.status !== 'running') break;
        }
      }
      return ran;
    }

    const statusOf = async (runId: string) =>
      Object.fromEntries((await store.getRun(runId))!.steps.map((step) => [step.stepId, step.status]));

    it('runs fix-report when the check failed', async () => {
      await store.createRun({
        id: 'r1',
        plan: reportPlan(),
        planHash: 'h',
        inputs: { region: 'eu' },
        workspace: '/ws',
        now: 1000,
      });
      const ran = await runToEnd('r1', { check: { passed: false } });
      expect(ran).toEqual(['fetch', 'check', 'fix-report', 'send', 'archive']);
      expect((await store.getRun('r1'))?.status).toBe('succeeded');
      expect(await statusOf('r1')).toMatchObject({ 'fix-report': 'succeeded', translate: 'skipped' });
    });

    it('skips fix-report with the reason when the check passed, and send still runs', async () => {
      await store.createRun({
        id: 'r2',
        plan: reportPlan(),
        planHash: 'h',
        inputs: { region: 'eu' },
        workspace: '/ws',
        now: 1000,
      });
      const ran = await runToEnd('r2', { check: { passed: true } });
      expect(ran).toEqual(['fetch', 'check', 'send', 'archive']);
      const run = (await store.getRun('r2'))!;
      expect(run.status).toBe('succeeded');
      const fix = run.steps.find((step) => step.stepId === 'fix-report')!;
      expect(fix).toMatchObject({
        status: 'skipped',
        attempt: 0,
        lastError: 'when steps.check.result.passed == false was false',
      });
      // A root step's condition reads the run's inputs: translate is for other regions only.
      expect(run.steps.find((step) => step.stepId === 'translate')).toMatchObject({
        status: 'skipped',
        lastError: 'when inputs.region != "eu" was false',
      });
      const skipped = (await store.getEvents('r2')).filter((event) => event.type === 'step.skipped');
      expect(skipped.map((event) => event.stepId)).toEqual(
        expect.arrayContaining(['fix-report', 'translate']),
      );
      expect(skipped.find((event) => event.stepId === 'fix-report')).toMatchObject({
        reason: 'when steps.check.result.passed == false was false',
      });
    });

    it('blocks a step whose condition cannot be decided, as invalid, naming the problem', async () => {
      const plan = reportPlan('steps.check.result.score < 7');
      await store.createRun({
        id: 'r3',
        plan,
        planHash: 'h',
        inputs: { region: 'eu' },
        workspace: '/ws',
        now: 1000,
      });
      const ran = await runToEnd('r3', { check: { passed: true } });
      expect(ran).toEqual(['fetch', 'check']);
      const run = (await store.getRun('r3'))!;
      expect(run.status).toBe('blocked');
      expect(run.steps.find((step) => step.stepId === 'fix-report')).toMatchObject({
        status: 'blocked',
        lastFailureClass: 'invalid',
        blockedReason:
          'when steps.check.result.score < 7: No such key: score; fix steps.fix-report.when, or: baton skip r3 fix-report',
      });
      expect(run.steps.find((step) => step.stepId === 'send')?.status).toBe('pending');
    });
  });
}
