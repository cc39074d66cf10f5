import { describe, expect, it } from 'vitest';
import { firstDueAt, notBeforeOf } from '../src/core/not-before.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { Plan } from '../src/core/plan/types.js';
import { approveRun } from '../src/core/run-commands.js';
import { stepOf } from '../src/core/run-state.js';
import { claimStep, completeStep } from '../src/core/transitions.js';
import { runStateOf } from './helpers/run-state.js';

const AT = Date.parse('2026-12-24T08:00:00+08:00');
const HOUR = 3_600_000;

function plan(steps: object[], inputs: object = {}): Plan {
  return validatePlanObject({ name: 'p', inputs, steps }, 'test');
}

describe('notBefore: when a step is first due', () => {
  it('a literal date-time holds a step without dependencies back until then', () => {
    const run = runStateOf(plan([{ id: 'a', fn: 'f', notBefore: '2026-12-24T08:00:00+08:00' }]), {
      now: AT - HOUR,
    });
    expect(stepOf(run, 'a')).toMatchObject({ status: 'ready', dueAt: AT });
  });

  it('a date in the past does not delay the step; with delayBeforeMs the later of the two wins', () => {
    const steps = [
      { id: 'past', fn: 'f', notBefore: '2026-12-24T08:00:00+08:00', delayBeforeMs: '1m' },
      { id: 'later', fn: 'f', notBefore: '2026-12-24T08:00:00+08:00', delayBeforeMs: '2h' },
      { id: 'delay', fn: 'f', notBefore: '2026-12-24T08:00:00+08:00', delayBeforeMs: '1m' },
    ];
    const after = runStateOf(plan(steps), { now: AT + HOUR });
    expect(stepOf(after, 'past')?.dueAt).toBe(AT + HOUR + 60_000);
    const before = runStateOf(plan(steps), { now: AT - HOUR });
    expect(stepOf(before, 'later')?.dueAt).toBe(AT + HOUR);
    expect(stepOf(before, 'delay')?.dueAt).toBe(AT);
  });

  it('a template over inputs is rendered for the run', () => {
    const p = plan([{ id: 'a', fn: 'f', notBefore: '{{inputs.when}}' }], { when: null });
    const run = runStateOf(p, { now: 0, inputs: { when: '2026-12-24T00:00:00Z' } });
    expect(stepOf(run, 'a')?.dueAt).toBe(Date.parse('2026-12-24T00:00:00Z'));
  });

  it("a template over a dependency's result is rendered when the step becomes ready", () => {
    const p = plan([
      { id: 'pick', fn: 'f' },
      { id: 'send', fn: 'f', dependsOn: ['pick'], notBefore: '{{steps.pick.result.at}}' },
    ]);
    let run = claimStep(runStateOf(p, { now: 10 }), 'pick', 'w', 10, 1000).run;
    const result = JSON.stringify({ summary: 'ok', outputs: [], value: { at: '2026-12-24T08:00:00+08:00' } });
    run = completeStep(run, 'pick', { ok: true, summary: 'ok', outputs: [] }, 20, () => 0, result).run;
    expect(stepOf(run, 'send')).toMatchObject({ status: 'ready', dueAt: AT });
  });

  it('a template that renders to no date-time blocks the step as invalid when it is claimed', () => {
    const p = plan([{ id: 'a', fn: 'f', notBefore: '{{inputs.when}}' }], { when: null });
    const run = runStateOf(p, { now: 5, inputs: { when: 'next tuesday' } });
    expect(stepOf(run, 'a')?.dueAt).toBe(5);
    const claimed = claimStep(run, 'a', 'w', 5, 1000);
    const step = stepOf(claimed.run, 'a');
    expect(step).toMatchObject({ status: 'blocked', lastFailureClass: 'invalid', attempt: 0 });
    expect(step?.blockedReason).toContain('notBefore {{inputs.when}} gave "next tuesday"');
    expect(step?.blockedReason).toContain('date-time with an offset');
    expect(claimed.events.map((e) => e.type)).toEqual(['step.blocked', 'run.blocked']);
  });

  it('a step made ready before its notBefore by another path is not claimed: it becomes due then', () => {
    const p = plan([{ id: 'a', fn: 'f', notBefore: '2026-12-24T08:00:00+08:00' }]);
    const run = runStateOf(p, { now: 0 });
    const early = { ...run, steps: run.steps.map((s) => ({ ...s, dueAt: 0 })) };
    const claimed = claimStep(early, 'a', 'w', 0, 1000);
    expect(stepOf(claimed.run, 'a')).toMatchObject({ status: 'ready', dueAt: AT, attempt: 0 });
    expect(claimed.events).toEqual([]);
    expect(stepOf(claimStep(claimed.run, 'a', 'w', AT, 1000).run, 'a')?.status).toBe('running');
  });

  it('an approved proposal keeps its notBefore', () => {
    const p = plan([{ id: 'a', fn: 'f', notBefore: '2026-12-24T08:00:00+08:00' }]);
    const proposed = { ...runStateOf(p, { now: 0 }), status: 'awaiting_approval' as const };
    expect(stepOf(approveRun(proposed, 100).run, 'a')?.dueAt).toBe(AT);
  });

  it('notBeforeOf and firstDueAt: no notBefore, no change', () => {
    const p = plan([{ id: 'a', fn: 'f', delayBeforeMs: 7 }]);
    const run = runStateOf(p);
    expect(notBeforeOf(run, p.steps[0]!)).toBeNull();
    expect(firstDueAt(run, p.steps[0]!, 100)).toBe(107);
  });
});

describe('notBefore in a plan', () => {
  it('a literal that is not a date-time with an offset is PLAN_INVALID naming the field', () => {
    for (const bad of ['2026-12-24T08:00:00', 'tomorrow', '2026-12-24']) {
      expect(() => plan([{ id: 'a', fn: 'f', notBefore: bad }])).toThrow(
        /steps\.a\.notBefore: .*not a date-time/,
      );
    }
    expect(() => plan([{ id: 'a', fn: 'f', notBefore: 1_700_000_000_000 }])).toThrow(/steps\.a\.notBefore/);
  });

  it('a template naming an undeclared input or a step it does not depend on is PLAN_INVALID', () => {
    expect(() => plan([{ id: 'a', fn: 'f', notBefore: '{{inputs.when}}' }])).toThrow(
      /steps\.a\.notBefore: \{\{inputs\.when\}\}: input "when" is not declared/,
    );
    expect(() =>
      plan([
        { id: 'x', fn: 'f' },
        { id: 'a', fn: 'f', notBefore: '{{steps.x.result.at}}' },
      ]),
    ).toThrow(/steps\.a\.notBefore: .*not a dependency/);
  });
});
