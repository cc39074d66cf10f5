import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { Plan } from '../src/core/plan/types.js';
import type { ClaimedStep, Completion, Store } from '../src/store/store.js';
import type { StoreHarness } from './store-contract.js';

/**
 * `Store.rerunFrom` on every store (core/rerun.ts): a step and its dependents run again with fresh
 * tries and continuing attempt numbers, every other step keeps its result, effects are kept unless
 * redone, and what cannot be rerun is refused with nothing stored. Noun: `RunCommands.rerunFrom`
 * (src/store/contract/run-commands.ts).
 */

/** The daily report: fetch, analyze, report, send; `notes` beside, depending on nothing. */
function dailyPlan(extra: Record<string, Record<string, unknown>> = {}): Plan {
  return validatePlanObject(
    {
      name: 'daily-report',
      defaults: { retry: { maxAttempts: 1 } },
      steps: [
        { id: 'fetch', fn: 'fetch' },
        { id: 'analyze', fn: 'analyze', dependsOn: ['fetch'] },
        { id: 'report', fn: 'report', dependsOn: ['analyze'] },
        { id: 'send', fn: 'send', dependsOn: ['report'], ...extra.send },
        { id: 'notes', fn: 'notes' },
      ],
    },
    'daily.json',
  );
}

function pagesPlan(): Plan {
  return validatePlanObject(
    {
      name: 'pages',
      limits: { concurrency: 10 },
      defaults: { retry: { maxAttempts: 1 } },
      steps: [
        { id: 'research', fn: 'research' },
        {
          id: 'summarise',
          fn: 'summarise',
          dependsOn: ['research'],
          forEach: { items: 'steps.research.result.pages', as: 'page', maxItems: 10 },
        },
        { id: 'report', fn: 'report', dependsOn: ['summarise'] },
      ],
    },
    'pages.json',
  );
}

export function describeRerunContract(name: string, makeHarness: () => StoreHarness): void {
  describe(`Store contract, rerun: ${name}`, () => {
    let harness: StoreHarness;
    let store: Store;
    let now = 1000;
    beforeEach(async () => {
      harness = makeHarness();
      store = await harness.open();
      now = 1000;
    });
    afterEach(async () => {
      await store.close();
      await harness.cleanup();
    });

    const cycle = (completions: Completion[] = [], owner = 'w1') =>
      store.cycle({ owner, now, leaseMs: 1000, completions, claimLimit: 20, random: () => 0 });
    const done = (claim: ClaimedStep, value: unknown = claim.stepId, owner = 'w1'): Completion => ({
      runId: claim.runId,
      stepId: claim.stepId,
      attempt: claim.attempt,
      owner,
      outcome: { ok: true, summary: `${claim.stepId} ${claim.attempt}`, outputs: [], value },
      startedAt: now - 1,
      endedAt: now,
      logPath: null,
    });

    /** Drives the run to the end; returns `step#attempt` of every attempt, in claim order. */
    async function runToEnd(values: (claim: ClaimedStep) => unknown = (c) => c.stepId): Promise<string[]> {
      const ran: string[] = [];
      let claimed = (await cycle()).claimed;
      // A fan-out's expansion claims nothing: go on while the run is running.
      for (
        let i = 0;
        i < 50 && (claimed.length > 0 || (await store.getRun('run1'))?.status === 'running');
        i++
      ) {
        ran.push(...claimed.map((c) => `${c.stepId}#${c.attempt}`));
        now += 10;
        claimed = (await cycle(claimed.map((c) => done(c, values(c))))).claimed;
      }
      return ran;
    }

    const statuses = async (runId = 'run1') =>
      Object.fromEntries((await store.getRun(runId))!.steps.map((s) => [s.stepId, s.status]));
    const create = (plan: Plan) =>
      store.createRun({ id: 'run1', plan, planHash: 'h', inputs: {}, workspace: '/ws', now });

    it('runs the step and its descendants again, in order, attempts continuing; the others keep their results', async () => {
      await create(dailyPlan());
      expect(await runToEnd()).toHaveLength(5);
      const fetchBefore = (await store.getStepResults('run1', ['fetch'])).fetch;
      now += 100;
      const summary = await store.rerunFrom('run1', { from: 'analyze', by: 'ana' }, now);
      expect(summary.status).toBe('running');
      expect(await statuses()).toMatchObject({
        fetch: 'succeeded',
        analyze: 'ready',
        report: 'pending',
        send: 'pending',
        notes: 'succeeded',
      });
      const events = await store.getEvents('run1');
      expect(events.at(-1)).toMatchObject({
        type: 'run.rerun_requested',
        stepId: 'analyze',
        by: 'ana',
        only: false,
        redoEffects: false,
        steps: 3,
      });
      expect(await runToEnd()).toEqual(['analyze#2', 'report#2', 'send#2']);
      const run = await store.getRun('run1');
      expect(run?.status).toBe('succeeded');
      expect((await store.getStepResults('run1', ['fetch'])).fetch).toEqual(fetchBefore);
      expect((await store.getStepResults('run1', ['report'])).report?.summary).toBe('report 2');
      expect((await store.getAttempts('run1', 'analyze')).map((a) => a.attempt)).toEqual([1, 2]);
    });

    it('--only runs the step alone and lists the steps after it as resting on an older result', async () => {
      await create(dailyPlan());
      await runToEnd();
      await store.rerunFrom('run1', { from: 'analyze', only: true, by: 'ana' }, now);
      expect((await store.getEvents('run1')).at(-1)).toMatchObject({
        type: 'run.rerun_requested',
        only: true,
        steps: 1,
        stale: ['report', 'send'],
      });
      expect(await runToEnd()).toEqual(['analyze#2']);
      expect((await store.getStepResults('run1', ['report'])).report?.summary).toBe('report 1');
    });

    it('keeps recorded effects on a rerun, and forgets those of the rerun steps with redoEffects', async () => {
      await create(dailyPlan());
      await runToEnd();
      const key = { runId: 'run1', stepId: 'send', key: 'mail' };
      const fetchKey = { runId: 'run1', stepId: 'fetch', key: 'download' };
      expect(await store.beginEffect(key, now)).toBeNull();
      await store.completeEffect(key, { sent: 1 }, now);
      expect(await store.beginEffect(fetchKey, now)).toBeNull();
      await store.completeEffect(fetchKey, { got: 1 }, now);
      await store.rerunFrom('run1', { from: 'report', by: 'ana' }, now);
      expect(await store.beginEffect(key, now)).toEqual({ state: 'done', result: { sent: 1 } });
      await runToEnd();
      await store.rerunFrom('run1', { from: 'report', redoEffects: true, by: 'ana' }, now);
      expect(await store.beginEffect(key, now)).toBeNull();
      expect(await store.beginEffect(fetchKey, now)).toEqual({ state: 'done', result: { got: 1 } });
    });

    it('refuses an unknown run or step, a cancelled run, a step not run yet and an unsafe step, storing nothing', async () => {
      await create(dailyPlan({ send: { sideEffect: 'unsafe' } }));
      await runToEnd();
      const before = (await store.getEvents('run1')).length;
      const refused = async (call: Promise<unknown>, code: string, text: RegExp) =>
        expect(call).rejects.toSatisfy((e) => isBatonError(e) && e.code === code && text.test(e.message));
      await refused(store.rerunFrom('nope', { from: 'fetch', by: 'x' }, now), 'RUN_NOT_FOUND', /nope/);
      await refused(store.rerunFrom('run1', { from: 'analyse', by: 'x' }, now), 'STEP_NOT_FOUND', /analyse/);
      await refused(
        store.rerunFrom('run1', { from: 'report', by: 'x' }, now),
        'INVALID_ARGUMENT',
        /step send is unsafe.*--redo-effects/,
      );
      expect(await statuses()).toMatchObject({ report: 'succeeded', send: 'succeeded' });
      await store.rerunFrom('run1', { from: 'report', only: true, by: 'x' }, now);
      await store.cancelRun('run1', now);
      await refused(
        store.rerunFrom('run1', { from: 'fetch', by: 'x' }, now),
        'INVALID_TRANSITION',
        /cancelled.*baton fork run1 --from fetch/,
      );
      expect((await store.getEvents('run1')).length).toBe(before + 1 + 2);
      await store.createRun({
        id: 'run2',
        plan: dailyPlan(),
        planHash: 'h',
        inputs: {},
        workspace: '/ws',
        now,
      });
      await refused(
        store.rerunFrom('run2', { from: 'report', by: 'x' }, now),
        'INVALID_TRANSITION',
        /has not run yet/,
      );
    });

    it('stops a running step of the rerun first: it starts again once its old attempt reported', async () => {
      await create(dailyPlan());
      const [fetch, notes] = (await cycle()).claimed;
      expect([fetch?.stepId, notes?.stepId]).toEqual(['fetch', 'notes']);
      now += 10;
      await store.rerunFrom('run1', { from: 'fetch', by: 'ana' }, now);
      // The old attempt's lease is lost at its next renewal; no new attempt before it reports.
      const lost = await store.renewLeases('w1', [fetch!], 1000, now);
      expect(lost.map((l) => l.stepId)).toEqual(['fetch']);
      now += 10;
      expect((await cycle()).claimed).toEqual([]);
      now += 10;
      const interrupted: Completion = {
        ...done(fetch!),
        outcome: { ok: false, failureClass: 'interrupted', message: 'aborted' },
      };
      const after = await cycle([interrupted]);
      expect(after.accepted).toEqual([false]);
      expect(after.claimed.map((c) => `${c.stepId}#${c.attempt}`)).toEqual(['fetch#2']);
    });

    it('a running step after the rerun step does not start again while its old attempt holds its lease', async () => {
      await create(dailyPlan());
      let claimed = (await cycle()).claimed;
      now += 10;
      claimed = (await cycle(claimed.map((c) => done(c)))).claimed;
      const analyze = claimed.find((c) => c.stepId === 'analyze')!;
      expect(analyze).toBeDefined();
      now += 10;
      await store.rerunFrom('run1', { from: 'fetch', by: 'ana' }, now);
      const [fetch] = (await cycle()).claimed;
      expect(fetch?.stepId).toBe('fetch');
      now += 10;
      // fetch is done again: analyze is due, but its old attempt (lease until +1000 ms) has not ended.
      expect((await cycle([done(fetch!)])).claimed).toEqual([]);
      now += 10;
      const stopped: Completion = {
        ...done(analyze),
        outcome: { ok: false, failureClass: 'interrupted', message: 'aborted' },
      };
      const after = await cycle([stopped]);
      expect(after.claimed.map((c) => `${c.stepId}#${c.attempt}`)).toEqual(['analyze#2']);
    });

    it('stores a fork with its kept steps settled as the old run left them, and claims only the rest', async () => {
      await create(dailyPlan());
      await runToEnd();
      const old = await store.getRun('run1');
      const kept = ['fetch', 'analyze', 'notes'].map((stepId) => ({
        stepId,
        status: 'succeeded' as const,
        resultJson: old!.steps.find((s) => s.stepId === stepId)!.resultJson,
      }));
      const plan = { ...dailyPlan(), forkedFrom: { runId: 'run1', stepId: 'report' } };
      await store.createRun({
        id: 'run2',
        plan,
        planHash: 'h2',
        inputs: {},
        workspace: '/ws2',
        now,
        keptSteps: kept,
      });
      expect(await statuses('run2')).toEqual({
        fetch: 'succeeded',
        analyze: 'succeeded',
        report: 'ready',
        send: 'pending',
        notes: 'succeeded',
      });
      expect((await store.getRun('run2'))?.plan.forkedFrom).toEqual({ runId: 'run1', stepId: 'report' });
      expect((await store.getEvents('run2'))[0]).toMatchObject({
        type: 'run.created',
        forkedFrom: { runId: 'run1', stepId: 'report' },
      });
      const ran: string[] = [];
      let claimed = (await cycle()).claimed;
      while (claimed.length > 0) {
        ran.push(...claimed.map((c) => `${c.runId} ${c.stepId}`));
        // What the forked report reads is the old run's analysis.
        if (claimed[0]?.stepId === 'report') expect(claimed[0].results.analyze?.value).toBe('analyze');
        now += 10;
        claimed = (await cycle(claimed.map((c) => done(c)))).claimed;
      }
      expect(ran).toEqual(['run2 report', 'run2 send']);
      expect((await store.getRun('run2'))?.status).toBe('succeeded');
    });

    it('a rerun of a fan-out runs its items again; a rerun from an item settles its group again', async () => {
      await create(pagesPlan());
      const pages = (claim: ClaimedStep) =>
        claim.stepId === 'research' ? { pages: ['a', 'b'] } : `${claim.stepId}:${claim.attempt}`;
      await runToEnd(pages);
      await store.rerunFrom('run1', { from: 'summarise', by: 'ana' }, now);
      expect((await runToEnd(pages)).sort()).toEqual(['report#2', 'summarise[0]#2', 'summarise[1]#2']);
      await store.rerunFrom('run1', { from: 'summarise[1]', by: 'ana' }, now);
      expect(await statuses()).toMatchObject({
        summarise: 'pending',
        'summarise[0]': 'succeeded',
        report: 'pending',
      });
      expect(await runToEnd(pages)).toEqual(['summarise[1]#3', 'report#3']);
      const group = (await store.getStepResults('run1', ['summarise'])).summarise;
      expect(group?.value).toEqual(['summarise[0]:2', 'summarise[1]:3']);
    });
  });
}
