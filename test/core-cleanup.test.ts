/**
 * Cleanup that always runs, in the pure core: `compensate:` on steps and the plan's `finally:`. A
 * run that ends (cancelled, given up under `onFailure: compensate`, or succeeded with finally
 * steps) appends its cleanup steps to its snapshot in that one transition and takes its end status
 * only once they are all done; a step that never completed is never compensated.
 */

import { describe, expect, it } from 'vitest';
import '../src/store/core-libraries.js';
import { statusWithCleanup } from '../src/core/cleanup.js';
import type { BatonEvent } from '../src/core/events.js';
import type { StepOutcome } from '../src/core/failure.js';
import { declaredPlan } from '../src/core/fork.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { rerunFrom } from '../src/core/rerun.js';
import { cancelRun, retryStep } from '../src/core/run-commands.js';
import type { RunState } from '../src/core/run-state.js';
import { claimStep, completeStep } from '../src/core/transitions.js';
import { runStateOf } from './helpers/run-state.js';

const OK: StepOutcome = { ok: true, summary: 'done', outputs: [] };

function planOf(extra: Record<string, unknown> = {}, steps?: unknown[]) {
  return validatePlanObject(
    {
      name: 'release',
      steps: steps ?? [
        { id: 'branch', fn: 'branch', compensate: { fn: 'deleteBranch' } },
        { id: 'pr', fn: 'pr', dependsOn: ['branch'], compensate: 'Close the PR {{steps.pr.summary}}' },
      ],
      finally: [{ id: 'notify', fn: 'notify' }],
      ...extra,
    },
    'release.yaml',
  );
}

let clock = 100;
const random = () => 0;

function claim(run: RunState, stepId: string): RunState {
  clock += 1;
  const next = claimStep(run, stepId, 'w', clock, 60_000).run;
  expect(next.steps.find((step) => step.stepId === stepId)?.status).toBe('running');
  return next;
}

function finish(run: RunState, stepId: string, outcome: StepOutcome = OK) {
  clock += 1;
  const json = outcome.ok ? JSON.stringify({ summary: outcome.summary, outputs: [] }) : null;
  return completeStep(run, stepId, outcome, clock, random, json);
}

function statuses(run: RunState): [string, string][] {
  return run.steps.map((step) => [step.stepId, step.status]);
}

function types(events: readonly BatonEvent[]): string[] {
  return events.map((event) => event.type);
}

/** branch succeeded, pr running. */
function prRunning(plan = planOf()): RunState {
  let run = runStateOf(plan);
  run = claim(run, 'branch');
  run = finish(run, 'branch').run;
  return claim(run, 'pr');
}

describe('cancel with compensation', () => {
  it('compensates only the completed step, then runs finally, and is cancelled once they are done', () => {
    const cancelled = cancelRun(prRunning(), clock, { compensate: true });
    let run = cancelled.run;
    expect(cancelled.planChanged).toBe(true);
    expect(cancelled.addedSteps).toEqual(['branch:compensate', 'notify']);
    expect(statuses(run)).toEqual([
      ['branch', 'succeeded'],
      ['pr', 'cancelled'],
      ['branch:compensate', 'ready'],
      ['notify', 'pending'],
    ]);
    // The running pr keeps its lease until its worker stops it; the run is not cancelled yet.
    expect(run.steps[1]!.leaseOwner).toBe('w');
    expect(run.status).toBe('running');
    expect(types(cancelled.events)).toEqual(['step.cancelled', 'run.cleanup_started']);
    expect(statusWithCleanup(run.status, run.plan, run.steps)).toBe('running (cancelling, cleanup 0/2 done)');
    expect(run.plan.steps[2]).toMatchObject({
      kind: 'fn',
      fn: 'deleteBranch',
      cleanup: { runStatus: 'cancelled', compensates: 'branch' },
    });

    run = claim(run, 'branch:compensate');
    const compensated = finish(run, 'branch:compensate');
    run = compensated.run;
    expect(run.status).toBe('running');
    expect(statuses(run).at(-1)).toEqual(['notify', 'ready']);
    expect(types(compensated.events)).not.toContain('run.cancelled');

    run = claim(run, 'notify');
    const done = finish(run, 'notify');
    expect(done.run.status).toBe('cancelled');
    expect(done.run.finishedAt).toBe(clock);
    expect(types(done.events).filter((type) => type.startsWith('run.'))).toEqual(['run.cancelled']);
    expect(statusWithCleanup(done.run.status, done.run.plan, done.run.steps)).toBe(
      'cancelled (cleanup 2/2 done)',
    );
  });

  it('compensates every completed step in the reverse of the plan order, one after the other', () => {
    const plan = planOf({}, [
      { id: 'a', fn: 'a', compensate: { fn: 'undoA' } },
      { id: 'b', fn: 'b', dependsOn: ['a'], compensate: { fn: 'undoB' } },
      { id: 'c', fn: 'c', dependsOn: ['b'] },
      { id: 'd', fn: 'd', dependsOn: ['c'], compensate: { fn: 'undoD' } },
    ]);
    let run = runStateOf(plan);
    for (const id of ['a', 'b', 'c']) run = finish(claim(run, id), id).run;
    run = cancelRun(run, clock, { compensate: true }).run;
    expect(run.plan.steps.slice(4).map((step) => [step.id, step.dependsOn])).toEqual([
      ['b:compensate', []],
      ['a:compensate', ['b:compensate']],
      ['notify', ['a:compensate']],
    ]);
  });

  it("a fan-out's compensate: undoes each completed item, with its {{item}}", () => {
    const plan = planOf({ finally: undefined }, [
      { id: 'list', fn: 'list' },
      {
        id: 'each',
        fn: 'publish',
        dependsOn: ['list'],
        forEach: { items: 'steps.list.result', as: 'page', maxItems: 5 },
        compensate: 'unpublish {{page}}',
      },
    ]);
    let run = claim(runStateOf(plan), 'list');
    clock += 1;
    const listed: StepOutcome = { ok: true, summary: 'listed', outputs: [], value: ['a', 'b'] };
    run = completeStep(run, 'list', listed, clock, random, JSON.stringify(listed)).run;
    clock += 1;
    run = claimStep(run, 'each', 'w', clock, 60_000).run;
    run = finish(claim(run, 'each[0]'), 'each[0]').run;
    const cancelled = cancelRun(run, clock, { compensate: true });
    expect(cancelled.addedSteps).toEqual(['each[0]:compensate']);
    const undo = cancelled.run.plan.steps.at(-1)!;
    expect(undo).toMatchObject({
      instruction: 'unpublish {{page}}',
      cleanup: { runStatus: 'cancelled', compensates: 'each[0]', item: { as: 'page', value: 'a' } },
    });
    expect(undo.forEachItem).toBeUndefined();
  });

  it('without --compensate runs only finally; with nothing to clean it is cancelled at once', () => {
    const plain = cancelRun(prRunning(), clock);
    expect(plain.addedSteps).toEqual(['notify']);
    const bare = planOf({ finally: undefined });
    const cancelled = cancelRun(prRunning(bare), clock);
    expect(cancelled.run.status).toBe('cancelled');
    expect(cancelled.planChanged).toBeUndefined();
    expect(types(cancelled.events)).toEqual(['step.cancelled', 'run.cancelled']);
  });

  it('a second cancel during cleanup ends the run at once, its cleanup cancelled', () => {
    const run = cancelRun(prRunning(), clock, { compensate: true }).run;
    const again = cancelRun(run, clock);
    expect(again.run.status).toBe('cancelled');
    expect(statuses(again.run).slice(2)).toEqual([
      ['branch:compensate', 'cancelled'],
      ['notify', 'cancelled'],
    ]);
    expect(types(again.events).filter((type) => type === 'run.cancelled')).toHaveLength(1);
  });

  it('cleanup runs past the run budget that stopped the work', () => {
    const plan = planOf({ limits: { maxSteps: 2 } });
    let run = cancelRun(prRunning(plan), clock, { compensate: true }).run;
    expect(run.attemptsTotal).toBe(2);
    run = finish(claim(run, 'branch:compensate'), 'branch:compensate').run;
    run = finish(claim(run, 'notify'), 'notify').run;
    expect(run.status).toBe('cancelled');
  });
});

describe('finally after success, and giving up under onFailure: compensate', () => {
  it('runs finally once the last step succeeded, and succeeds after it', () => {
    let run = runStateOf(planOf());
    run = finish(claim(run, 'branch'), 'branch').run;
    const last = finish(claim(run, 'pr'), 'pr');
    expect(last.run.status).toBe('running');
    expect(types(last.events)).not.toContain('run.succeeded');
    expect(last.addedSteps).toEqual(['notify']);
    expect(last.run.plan.steps.at(-1)?.cleanup).toEqual({ runStatus: 'succeeded' });
    const done = finish(claim(last.run, 'notify'), 'notify');
    expect(done.run.status).toBe('succeeded');
    expect(types(done.events)).toContain('run.succeeded');
  });

  it('a step blocked for good gives the run up: compensations, finally, then failed with the reason', () => {
    let run = runStateOf(planOf({ onFailure: 'compensate' }));
    run = finish(claim(run, 'branch'), 'branch').run;
    const failed = finish(claim(run, 'pr'), 'pr', {
      ok: false,
      failureClass: 'invalid',
      message: 'bad repo',
    });
    run = failed.run;
    expect(run.status).toBe('running');
    expect(statuses(run)).toEqual([
      ['branch', 'succeeded'],
      ['pr', 'cancelled'],
      ['branch:compensate', 'ready'],
      ['notify', 'pending'],
    ]);
    expect(run.plan.closing).toMatchObject({ status: 'failed' });
    expect(run.plan.closing?.reason).toContain('step pr:');
    run = finish(claim(run, 'branch:compensate'), 'branch:compensate').run;
    const done = finish(claim(run, 'notify'), 'notify');
    expect(done.run.status).toBe('failed');
    const failedEvent = done.events.find((event) => event.type === 'run.failed');
    expect(failedEvent).toMatchObject({ type: 'run.failed' });
    expect(JSON.stringify(failedEvent)).toContain('bad repo');
    // Under onFailure: compensate a plain cancel compensates too.
    const cancelled = cancelRun(prRunning(planOf({ onFailure: 'compensate' })), clock);
    expect(cancelled.addedSteps).toEqual(['branch:compensate', 'notify']);
  });

  it('a blocked cleanup step blocks the run; a retry of it goes on to the end', () => {
    let run = cancelRun(prRunning(), clock, { compensate: true }).run;
    run = finish(claim(run, 'branch:compensate'), 'branch:compensate', {
      ok: false,
      failureClass: 'invalid',
      message: 'no such branch',
    }).run;
    expect(run.status).toBe('blocked');
    expect(run.blockedReason).toContain('branch:compensate');
    run = retryStep(run, 'branch:compensate', clock).run;
    run = finish(claim(run, 'branch:compensate'), 'branch:compensate').run;
    run = finish(claim(run, 'notify'), 'notify').run;
    expect(run.status).toBe('cancelled');
  });

  it('a run that ran its cleanup is not rerun (fork it instead); a fork starts from the declared plan', () => {
    let run = runStateOf(planOf());
    run = finish(claim(run, 'branch'), 'branch').run;
    run = finish(claim(run, 'pr'), 'pr').run;
    run = finish(claim(run, 'notify'), 'notify').run;
    expect(() => rerunFrom(run, { from: 'pr', by: 'test' }, clock)).toThrow(/baton fork r1 --from pr/);
    const declared = declaredPlan(run.plan);
    expect(declared.steps.map((step) => step.id)).toEqual(['branch', 'pr']);
    expect(declared.closing).toBeUndefined();
    expect(declared.finally?.map((step) => step.id)).toEqual(['notify']);
  });
});

describe('validating cleanup', () => {
  const invalid = (plan: Record<string, unknown>) => {
    try {
      validatePlanObject({ name: 'p', steps: [{ id: 'a', fn: 'a' }], ...plan }, 'p.yaml');
    } catch (error) {
      return (error as Error).message;
    }
    return 'valid';
  };

  it('names what is wrong and where', () => {
    expect(invalid({ steps: [{ id: 'a', instruction: 'status {{run.status}}' }] })).toMatch(
      /steps\.a\.instruction: \{\{run\.status\}\} is known only once the run ended/,
    );
    expect(invalid({ finally: [{ id: 'n', fn: 'n', dependsOn: ['a'] }] })).toMatch(
      /finally\.n\.dependsOn\[0\]: "a" is a step of the plan/,
    );
    expect(invalid({ finally: [{ id: 'a', fn: 'n' }] })).toMatch(/finally\.a\.id: duplicate step id "a"/);
    expect(invalid({ finally: [{ id: 'n', fn: 'n', when: 'true' }] })).toMatch(
      /finally\.n\.when: a finally step runs once/,
    );
    expect(invalid({ steps: [{ id: 'a', wait: { for: 'approval' }, compensate: 'undo' }] })).toMatch(
      /steps\.a\.compensate: a wait step does nothing to undo/,
    );
    expect(
      invalid({
        steps: [
          { id: 'a', fn: 'a', compensate: 'undo {{steps.b.summary}}' },
          { id: 'b', fn: 'b' },
        ],
      }),
    ).toMatch(/steps\.a\.compensate\.instruction: \{\{steps\.b\.summary\}\}: step "b" is not a dependency/);
    expect(invalid({ onFailure: 'retry' })).toMatch(/onFailure: expected block or compensate/);
    expect(
      invalid({
        steps: [{ id: 'a', fn: 'a', compensate: 'undo {{steps.a.summary}} ({{run.status}})' }],
        finally: [{ id: 'n', instruction: 'report {{run.status}}: {{steps.a.summary}}' }],
        onFailure: 'compensate',
      }),
    ).toBe('valid');
  });
});
