import { describe, expect, it } from 'vitest';
import { claimableStep } from '../src/core/claim-rules.js';
import { compareDueSteps, type DueStep, pushDueSteps } from '../src/core/due-order.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { RunState } from '../src/core/run-state.js';
import { claimStep } from '../src/core/transitions.js';
import { runStateOf } from './helpers/run-state.js';

/** Three independent steps declared out of alphabetical order, due at `now`. */
function wideRun(id = 'r1', now = 0): RunState {
  const plan = validatePlanObject(
    {
      name: 'wide',
      limits: { concurrency: 2 },
      steps: [
        { id: 'zeta', fn: 'f' },
        { id: 'mid', fn: 'g' },
        { id: 'alpha', fn: 'f' },
        { id: 'later', fn: 'f', delayBeforeMs: 100 },
      ],
    },
    'test',
  );
  return runStateOf(plan, { id, now });
}

const ids = (due: DueStep[]) => due.map((step) => `${step.runId}:${step.stepId}`);

describe('due order', () => {
  it('offers due steps earliest first, then by run id, then in plan order, never by step id', () => {
    const due = [...pushDueSteps(wideRun('r2'), 0, []), ...pushDueSteps(wideRun('r1'), 0, [])];
    due.push({ runId: 'r9', stepId: 'early', dueAt: -5, rank: -5, position: 7 });
    expect(ids(due.sort(compareDueSteps))).toEqual([
      'r9:early',
      'r1:zeta',
      'r1:mid',
      'r1:alpha',
      'r2:zeta',
      'r2:mid',
      'r2:alpha',
    ]);
    // A step not due yet is not offered; it is once its time has come.
    expect(ids(pushDueSteps(wideRun(), 100, []))).toEqual(['r1:zeta', 'r1:mid', 'r1:alpha', 'r1:later']);
  });
});

describe('the claim predicate', () => {
  const scope = { now: 0 };

  it('admits a due step of a running run and says what it runs', () => {
    const run = wideRun();
    expect(claimableStep(run, 0, scope)?.id).toBe('zeta');
    // Not due yet; not a step of the plan.
    expect(claimableStep(run, 3, scope)).toBeNull();
    expect(claimableStep(run, 9, scope)).toBeNull();
  });

  it("for a check, refuses a step a timer made due after the check's start; a step made due without one is taken", () => {
    // The run was stored at 0: `later` is due at 100 by its delay, the others at 0, with no delay.
    const run = wideRun();
    expect(claimableStep(run, 3, { now: 200, dueBy: 50 })).toBeNull();
    expect(claimableStep(run, 3, { now: 200, dueBy: 100 })?.id).toBe('later');
    // Made due at 150, after the check started at 50, with no delay (a successor, a new run): taken.
    const stored = wideRun('r2', 150);
    expect(claimableStep(stored, 0, { now: 200, dueBy: 50 })?.id).toBe('zeta');
    // A retry's backoff that came after the check's start is the next check's.
    const retrying = {
      ...run,
      steps: run.steps.map((s, i) =>
        i === 0 ? { ...s, status: 'retry_wait' as const, dueAt: 120, updatedAt: 100 } : s,
      ),
    };
    expect(claimableStep(retrying, 0, { now: 200, dueBy: 50 })).toBeNull();
    expect(claimableStep(retrying, 0, { now: 200 })?.id).toBe('zeta');
  });

  it('refuses every step of a run that is not running, not the one driven, or at its concurrency', () => {
    const run = wideRun();
    expect(claimableStep({ ...run, status: 'blocked' }, 0, scope)).toBeNull();
    expect(claimableStep(run, 0, { ...scope, runId: 'other' })).toBeNull();
    expect(claimableStep(run, 0, { ...scope, runId: 'r1' })?.id).toBe('zeta');
    const twoRunning = claimStep(claimStep(run, 'zeta', 'w', 0, 1000).run, 'mid', 'w', 0, 1000).run;
    expect(claimableStep(twoRunning, 2, scope)).toBeNull();
  });

  it('leaves a function this process lacks to one that has it, and asks flow control last', () => {
    const run = wideRun();
    expect(claimableStep(run, 1, { ...scope, functions: ['f'] })).toBeNull();
    expect(claimableStep(run, 0, { ...scope, functions: ['f'] })?.id).toBe('zeta');
    const asked: number[] = [];
    const admitsAlpha = (_run: RunState, position: number) => asked.push(position) > 0 && position === 2;
    expect(claimableStep(run, 0, scope, admitsAlpha)).toBeNull();
    expect(claimableStep(run, 2, scope, admitsAlpha)?.id).toBe('alpha');
    // Not asked for a step refused before it (not due).
    expect(claimableStep(run, 3, scope, admitsAlpha)).toBeNull();
    expect(asked).toEqual([0, 2]);
  });
});
