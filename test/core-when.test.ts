/**
 * A step's `when`, in the pure core: decided when its dependencies settle, in the same transition;
 * a false condition skips the step and releases the steps after it, each deciding its own `when`
 * (a chain of skips included); `baton skip` releases the same way.
 */

import { describe, expect, it } from 'vitest';
// The core is handed the CEL library by the layers that run it (the stores, the workflow API).
import '../src/store/core-libraries.js';
import type { StepOutcome } from '../src/core/failure.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { skipStep } from '../src/core/run-commands.js';
import type { RunState } from '../src/core/run-state.js';
import { claimStep, completeStep } from '../src/core/transitions.js';
import { runStateOf } from './helpers/run-state.js';

function runOf(steps: Record<string, unknown>[], inputs: Record<string, string> = {}): RunState {
  const plan = validatePlanObject({ name: 'p', inputs: { mode: { default: 'x' } }, steps }, 'p');
  return runStateOf(plan, { inputs });
}

const done = (value: unknown): StepOutcome => ({
  ok: true,
  summary: JSON.stringify(value),
  outputs: [],
  value,
});
const resultJson = (value: unknown) => JSON.stringify({ summary: JSON.stringify(value), outputs: [], value });

function finish(run: RunState, stepId: string, value: unknown, now = 10) {
  const claimed = claimStep(run, stepId, 'w', now, 1000).run;
  return completeStep(claimed, stepId, done(value), now + 1, () => 0, resultJson(value));
}

const statuses = (run: RunState) => Object.fromEntries(run.steps.map((step) => [step.stepId, step.status]));

describe('when, in the core', () => {
  it('skips a chain of steps whose conditions are false in the transition that settled their dependency', () => {
    const run = runOf([
      { id: 'check', fn: 'f' },
      { id: 'fix', fn: 'f', dependsOn: ['check'], when: 'steps.check.result.passed == false' },
      { id: 'refix', fn: 'f', dependsOn: ['fix'], when: 'steps.fix.status == "succeeded"' },
      { id: 'note', fn: 'f', dependsOn: ['refix'], when: 'steps.refix.status == "skipped"' },
      { id: 'send', fn: 'f', dependsOn: ['note'] },
    ]);
    const transition = finish(run, 'check', { passed: true });
    expect(statuses(transition.run)).toEqual({
      check: 'succeeded',
      fix: 'skipped',
      refix: 'skipped',
      note: 'ready',
      send: 'pending',
    });
    expect(transition.events.filter((event) => event.type === 'step.skipped')).toEqual([
      { type: 'step.skipped', stepId: 'fix', reason: 'when steps.check.result.passed == false was false' },
      { type: 'step.skipped', stepId: 'refix', reason: 'when steps.fix.status == "succeeded" was false' },
    ]);
    expect(transition.run.steps[1]).toMatchObject({ attempt: 0, dueAt: null, lastError: expect.any(String) });
  });

  it('reads a skipped dependency as a null result, and decides again after a baton skip', () => {
    const run = runOf([
      { id: 'a', fn: 'f' },
      { id: 'b', fn: 'f', dependsOn: ['a'], when: 'steps.a.result == null && steps.a.status == "skipped"' },
    ]);
    const skipped = skipStep(run, 'a', 5).run;
    expect(statuses(skipped)).toEqual({ a: 'skipped', b: 'ready' });
  });

  it('decides a step without dependencies at its first claim, over the run inputs', () => {
    const steps = [
      { id: 'translate', fn: 'f', when: 'inputs.mode == "translate"' },
      { id: 'send', fn: 'f', dependsOn: ['translate'] },
    ];
    const skipped = claimStep(runOf(steps, { mode: 'x' }), 'translate', 'w', 1, 1000);
    expect(statuses(skipped.run)).toEqual({ translate: 'skipped', send: 'ready' });
    expect(skipped.run.attemptsTotal).toBe(0);
    const claimed = claimStep(runOf(steps, { mode: 'translate' }), 'translate', 'w', 1, 1000);
    expect(statuses(claimed.run)).toEqual({ translate: 'running', send: 'pending' });
  });

  it('blocks a step as invalid when its condition cannot be decided, and the run with it', () => {
    const run = runOf([
      { id: 'check', fn: 'f' },
      { id: 'fix', fn: 'f', dependsOn: ['check'], when: 'steps.check.result.score > 3' },
    ]);
    const transition = finish(run, 'check', 'all good');
    expect(transition.run.status).toBe('blocked');
    expect(transition.run.steps[1]).toMatchObject({ status: 'blocked', lastFailureClass: 'invalid' });
    expect(transition.run.steps[1]!.blockedReason).toMatch(/^when steps\.check\.result\.score > 3: /);
    expect(transition.events).toContainEqual(
      expect.objectContaining({ type: 'step.blocked', stepId: 'fix', failureClass: 'invalid' }),
    );
  });
});
