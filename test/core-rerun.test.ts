import { describe, expect, it } from 'vitest';
// The core is handed the CEL library by the layers that run it (the stores, the workflow API).
import '../src/store/core-libraries.js';
import { isBatonError } from '../src/core/errors.js';
import { declaredPlan, forkKeptSteps } from '../src/core/fork.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { rerunFrom, rerunSteps } from '../src/core/rerun.js';
import type { RunState } from '../src/core/run-state.js';
import { staleSteps } from '../src/core/stale-steps.js';
import { claimStep, completeStep } from '../src/core/transitions.js';
import { approveWaitStep, startWaiting } from '../src/core/waits.js';
import { runStateOf } from './helpers/run-state.js';

/** fetch -> analyze -> report -> send, and a gate waiting for approval before send; notes beside. */
function dailyRun(sendSideEffect = 'none'): RunState {
  const plan = validatePlanObject(
    {
      name: 'daily',
      steps: [
        { id: 'fetch', fn: 'f' },
        { id: 'analyze', fn: 'f', dependsOn: ['fetch'] },
        { id: 'report', fn: 'f', dependsOn: ['analyze'] },
        { id: 'gate', wait: { for: 'approval' }, dependsOn: ['report'] },
        { id: 'send', fn: 'f', dependsOn: ['gate'], sideEffect: sendSideEffect },
        { id: 'notes', fn: 'f' },
      ],
    },
    'daily.json',
  );
  return runStateOf(plan, { id: 'daily' });
}

let clock = 0;
const tick = () => {
  clock += 10;
  return clock;
};
/** Runs a due step to success at the next tick. */
function succeed(run: RunState, stepId: string, value: unknown = stepId): RunState {
  clock += 10;
  const claimed = claimStep(run, stepId, 'w', clock, 1000).run;
  clock += 10;
  const outcome = { ok: true as const, summary: String(value), outputs: [], value };
  return completeStep(
    claimed,
    stepId,
    outcome,
    clock,
    () => 0,
    JSON.stringify({ summary: String(value), outputs: [], value }),
  ).run;
}

function finished(sendSideEffect?: string): RunState {
  let run = dailyRun(sendSideEffect);
  for (const id of ['fetch', 'notes', 'analyze', 'report']) run = succeed(run, id);
  clock += 10;
  run = startWaiting(run, 'gate', 'Send?', null, clock).run;
  return run;
}

const status = (run: RunState) => Object.fromEntries(run.steps.map((s) => [s.stepId, s.status]));

describe('rerun (core)', () => {
  it('selects the step and its descendants; a wait in them waits again once reached', () => {
    const run = finished();
    expect(rerunSteps(run, 'analyze', false)).toEqual({
      steps: ['analyze', 'report', 'gate', 'send'],
      stale: [],
      kept: [],
      effects: [],
    });
    const rerun = rerunFrom(run, { from: 'analyze', by: 'ana' }, tick());
    expect(status(rerun.run)).toMatchObject({
      fetch: 'succeeded',
      notes: 'succeeded',
      analyze: 'ready',
      report: 'pending',
      gate: 'pending',
      send: 'pending',
    });
    expect(rerun.run.steps[3]!.waitingFor).toBeUndefined();
    let again = succeed(rerun.run, 'analyze');
    again = succeed(again, 'report');
    expect(again.steps[3]!.status).toBe('ready');
    expect(startWaiting(again, 'gate', 'Send?', null, tick()).run.steps[3]!.status).toBe('waiting');
    expect(again.steps[1]!.attempt).toBe(2);
  });

  it('--only leaves the steps after it settled and derives them as stale until they run again', () => {
    let run = dailyRun();
    for (const id of ['fetch', 'notes', 'analyze', 'report']) run = succeed(run, id);
    expect(staleSteps(run)).toEqual([]);
    const only = rerunFrom(run, { from: 'analyze', only: true, by: 'ana' }, tick());
    expect(only.selection).toEqual({ steps: ['analyze'], stale: ['report'], kept: [], effects: [] });
    run = succeed(only.run, 'analyze');
    expect(status(run).report).toBe('succeeded');
    expect(staleSteps(run)).toEqual(['report']);
    run = rerunFrom(run, { from: 'report', by: 'ana' }, tick()).run;
    run = succeed(run, 'report');
    expect(staleSteps(run)).toEqual([]);
  });

  it('refuses an unsafe step that ran without redoEffects, and clears effects only with it', () => {
    let run = finished('unsafe');
    run = approveWaitStep(run, 'gate', { by: 'x' }, tick()).run;
    run = succeed(run, 'send');
    expect(() => rerunFrom(run, { from: 'report', by: 'x' }, clock)).toThrow(/step send is unsafe/);
    const redone = rerunFrom(run, { from: 'report', redoEffects: true, by: 'x' }, clock);
    expect(redone.clearEffects).toEqual(['report', 'gate', 'send']);
    expect(rerunFrom(run, { from: 'report', only: true, by: 'x' }, clock).clearEffects).toBeUndefined();
  });

  it('--keep send: the unsafe send keeps its result and does not run; the steps before it run again', () => {
    let run = finished('unsafe');
    run = approveWaitStep(run, 'gate', { by: 'x' }, tick()).run;
    run = succeed(run, 'send');
    const kept = rerunFrom(run, { from: 'analyze', keep: ['send'], by: 'x' }, tick());
    expect(kept.selection).toEqual({
      steps: ['analyze', 'report', 'gate'],
      stale: [],
      kept: ['send'],
      effects: [],
    });
    expect(status(kept.run)).toMatchObject({
      analyze: 'ready',
      report: 'pending',
      gate: 'pending',
      send: 'succeeded',
    });
    expect(kept.clearEffects).toBeUndefined();
    expect(kept.events.find((e) => e.type === 'run.rerun_requested')).toMatchObject({
      kept: ['send'],
      steps: 3,
    });
    // --keep-effects keeps it too, without naming it; an idempotent step runs again only when not kept.
    expect(rerunFrom(run, { from: 'analyze', keepEffects: true, by: 'x' }, tick()).selection.kept).toEqual([
      'send',
    ]);
    let idempotent = finished('idempotent');
    idempotent = approveWaitStep(idempotent, 'gate', { by: 'x' }, tick()).run;
    idempotent = succeed(idempotent, 'send');
    expect(rerunSteps(idempotent, 'analyze', false).effects).toEqual(['send']);
    expect(rerunSteps(idempotent, 'analyze', false, { effects: true })).toMatchObject({
      steps: ['analyze', 'report', 'gate'],
      kept: ['send'],
      effects: [],
    });
  });

  it('a step resting only on a kept one keeps its result too; one that also rests on a rerun step runs', () => {
    const plan = validatePlanObject(
      {
        name: 'chain',
        steps: [
          { id: 'a', fn: 'f' },
          { id: 'send', fn: 'f', dependsOn: ['a'], sideEffect: 'unsafe' },
          { id: 'archive', fn: 'f', dependsOn: ['send'] },
          { id: 'summary', fn: 'f', dependsOn: ['a', 'send'] },
        ],
      },
      'chain.json',
    );
    let run = runStateOf(plan, { id: 'chain' });
    for (const id of ['a', 'send', 'archive', 'summary']) run = succeed(run, id);
    const rerun = rerunFrom(run, { from: 'a', keep: ['send'], by: 'x' }, tick());
    expect(rerun.selection).toMatchObject({ steps: ['a', 'summary'], kept: ['send'] });
    expect(status(rerun.run)).toMatchObject({
      a: 'ready',
      send: 'succeeded',
      archive: 'succeeded',
      summary: 'pending',
    });
    // summary becomes due once a finishes again (send is still satisfied).
    expect(status(succeed(rerun.run, 'a')).summary).toBe('ready');
  });

  it('a kept fan-out keeps every item; one item cannot be kept alone', () => {
    const plan = validatePlanObject(
      {
        name: 'mailing',
        steps: [
          { id: 'list', fn: 'f' },
          {
            id: 'mail',
            fn: 'f',
            dependsOn: ['list'],
            sideEffect: 'unsafe',
            forEach: { items: '[1, 2]', as: 'n', maxItems: 5 },
          },
          { id: 'done', fn: 'f', dependsOn: ['list', 'mail'] },
        ],
      },
      'mailing.json',
    );
    let run = succeed(runStateOf(plan, { id: 'mailing' }), 'list');
    run = claimStep(run, 'mail', 'w', tick(), 1000).run;
    run = succeed(succeed(run, 'mail[0]'), 'mail[1]');
    run = succeed(run, 'done');
    expect(status(run)).toMatchObject({ mail: 'succeeded', 'mail[0]': 'succeeded', done: 'succeeded' });
    const rerun = rerunFrom(run, { from: 'list', keep: ['mail'], by: 'x' }, tick());
    expect(rerun.selection).toMatchObject({ steps: ['list', 'done'], kept: ['mail'], effects: [] });
    expect(status(rerun.run)).toMatchObject({
      mail: 'succeeded',
      'mail[0]': 'succeeded',
      'mail[1]': 'succeeded',
    });
    expect(() => rerunFrom(run, { from: 'list', keep: ['mail[1]'], by: 'x' }, clock)).toThrow(
      '--keep mail[1]: it is one item of the fan-out mail: keep the whole fan-out (--keep mail)',
    );
    // Without keep the unsafe fan-out is refused; --keep-effects keeps it.
    expect(() => rerunFrom(run, { from: 'list', by: 'x' }, clock)).toThrow(/step mail/);
    expect(rerunFrom(run, { from: 'list', keepEffects: true, by: 'x' }, clock).selection.kept).toEqual([
      'mail',
    ]);
  });

  it('refuses a --keep it cannot honour, naming the step and why', () => {
    let run = finished('unsafe');
    run = approveWaitStep(run, 'gate', { by: 'x' }, tick()).run;
    run = succeed(run, 'send');
    const refused = (keep: string[], extra: Record<string, unknown> = {}) => {
      try {
        rerunFrom(run, { from: 'analyze', keep, by: 'x', ...extra }, clock);
        return 'accepted';
      } catch (error) {
        expect(isBatonError(error)).toBe(true);
        return (error as Error).message;
      }
    };
    expect(refused(['analyze'])).toBe('--keep analyze: it is the step the rerun starts from');
    expect(refused(['notes'])).toMatch(/^--keep notes: it does not run again in a rerun from analyze/);
    expect(refused(['nope'])).toMatch(/unknown step "nope"/);
    expect(refused(['send'], { only: true })).toMatch(/do not go with --only/);
    const waiting = finished('unsafe');
    expect(() => rerunFrom(waiting, { from: 'analyze', keep: ['send'], by: 'x' }, clock)).toThrow(
      /--keep send: it has no result to keep \(pending\)/,
    );
  });

  it('takes a blocked run back to running: the blocked step runs again after the rerun step', () => {
    let run = dailyRun();
    run = succeed(run, 'fetch');
    run = succeed(run, 'notes');
    const claimed = claimStep(run, 'analyze', 'w', tick(), 1000).run;
    const failure = { ok: false as const, failureClass: 'fatal' as const, message: 'no key' };
    run = completeStep(claimed, 'analyze', failure, tick(), () => 0).run;
    expect(run.status).toBe('blocked');
    const rerun = rerunFrom(run, { from: 'fetch', by: 'ana' }, tick()).run;
    expect(rerun.status).toBe('running');
    expect(rerun.blockedReason).toBeNull();
    expect(status(rerun)).toMatchObject({ fetch: 'ready', analyze: 'pending', notes: 'succeeded' });
    expect(rerun.steps[1]).toMatchObject({ tries: 0, lastError: null, attempt: 1 });
  });

  it('refuses a cancelled run (saying to fork) and a step that has not run', () => {
    const run = dailyRun();
    expect(() => rerunFrom(run, { from: 'fetch', by: 'x' }, 1)).toThrow(/has not run yet/);
    const cancelled = { ...succeed(run, 'fetch'), status: 'cancelled' as const };
    try {
      rerunFrom(cancelled, { from: 'fetch', by: 'x' }, 1);
      expect.unreachable();
    } catch (error) {
      expect(isBatonError(error, 'INVALID_TRANSITION')).toBe(true);
      expect((error as Error).message).toContain('baton fork daily --from fetch');
    }
  });
});

describe('fork (core)', () => {
  it('keeps the settled steps that do not depend on the fork point, and refuses a changed kept step', () => {
    const run = finished();
    const kept = forkKeptSteps(run, declaredPlan(run.plan), 'report', 'daily.json');
    expect(kept.map((k) => k.stepId)).toEqual(['fetch', 'analyze', 'notes']);
    expect(kept[1]).toMatchObject({ status: 'succeeded', resultJson: run.steps[1]!.resultJson });
    const edited = {
      ...run.plan,
      steps: run.plan.steps.map((s) => (s.id === 'notes' ? { ...s, fn: 'g' } : s)),
    };
    expect(() => forkKeptSteps(run, edited, 'report', 'daily-v2.json')).toThrow(
      'daily-v2.json: steps.notes changed, but the fork keeps its result from run daily',
    );
    const downstream = {
      ...run.plan,
      steps: run.plan.steps.map((s) => (s.id === 'send' ? { ...s, fn: 'g' } : s)),
    };
    expect(forkKeptSteps(run, downstream, 'report', 'v2').map((k) => k.stepId)).toEqual([
      'fetch',
      'analyze',
      'notes',
    ]);
  });
});
