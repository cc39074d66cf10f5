import { describe, expect, it } from 'vitest';
import type { StepOutcome } from '../src/core/failure.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { Plan } from '../src/core/plan/types.js';
import { resolveStep, resumeRun } from '../src/core/run-commands.js';
import { type RunState, stepOf } from '../src/core/run-state.js';
import { claimStep, completeStep, expireLease } from '../src/core/transitions.js';
import { runStateOf } from './helpers/run-state.js';

function plan(extra: Record<string, unknown> = {}, steps?: object[]): Plan {
  return validatePlanObject(
    {
      name: 'p',
      defaults: { retry: { maxAttempts: 5, initialDelayMs: 0, maxDelayMs: 0 } },
      steps: steps ?? [
        { id: 'a', fn: 'f' },
        { id: 'b', fn: 'f' },
        { id: 'c', fn: 'f', dependsOn: ['a', 'b'] },
      ],
      ...extra,
    },
    'test',
  );
}

function newRun(p: Plan, now = 0): RunState {
  return runStateOf(p, { now });
}

const spent = (tokens: number, costUsd = 0) => ({ inputTokens: tokens, outputTokens: 0, costUsd });
const ok = (tokens = 0, costUsd = 0): StepOutcome => ({
  ok: true,
  summary: 'done',
  outputs: [],
  usage: spent(tokens, costUsd),
});
const failed = (tokens = 0): StepOutcome => ({
  ok: false,
  failureClass: 'transient',
  message: 'try again',
  usage: spent(tokens),
});
const zero = () => 0;

function claim(run: RunState, stepId: string, now: number): RunState {
  return claimStep(run, stepId, 'w', now, 1000).run;
}

describe('run budgets', () => {
  it('maxTokens: the completion that reaches it stops the run; nothing new starts', () => {
    let run = newRun(plan({ limits: { maxTokens: 1000 } }));
    run = claim(run, 'a', 1);
    run = claim(run, 'b', 1);
    const done = completeStep(run, 'a', ok(600), 2, zero);
    expect(done.run.status).toBe('running');
    const over = completeStep(done.run, 'b', ok(500), 3, zero);
    expect(over.run.status).toBe('blocked');
    expect(over.run.blockedReason).toBe(
      'budget: maxTokens 1000 reached (1100 used); to allow as much again: baton resume r1',
    );
    expect(over.events).toContainEqual({
      type: 'budget.exceeded',
      limit: 'maxTokens',
      value: 1100,
      max: 1000,
    });
    // c became ready but the run is stopped: no claim.
    expect(stepOf(over.run, 'c')?.status).toBe('ready');
    expect(() => claimStep(over.run, 'c', 'w', 4, 1000)).toThrow(/cannot be claimed/);
  });

  it('maxCostUsd counts failed attempts too', () => {
    let run = newRun(plan({ limits: { maxCostUsd: 0.5 } }, [{ id: 'a', fn: 'f' }]));
    run = claim(run, 'a', 1);
    const first = completeStep(run, 'a', { ...failed(), usage: spent(10, 0.3) }, 2, zero);
    expect(first.run.status).toBe('running');
    const second = completeStep(
      claim(first.run, 'a', 3),
      'a',
      { ...failed(), usage: spent(10, 0.25) },
      4,
      zero,
    );
    expect(second.run.status).toBe('blocked');
    expect(second.events.find((e) => e.type === 'budget.exceeded')).toMatchObject({
      limit: 'maxCostUsd',
      max: 0.5,
    });
    expect(second.run.usage?.costUsd).toBeCloseTo(0.55);
  });

  it('a run whose last step succeeds is done, whatever it spent', () => {
    let run = newRun(plan({ limits: { maxTokens: 10 } }, [{ id: 'a', fn: 'f' }]));
    run = claim(run, 'a', 1);
    expect(completeStep(run, 'a', ok(50), 2, zero).run.status).toBe('succeeded');
  });

  it('maxWallMs: a claim after the deadline stops the run instead of starting the step', () => {
    const run = newRun(plan({ limits: { maxWallMs: '1m' } }), 1000);
    expect(claimStep(run, 'a', 'w', 60_999, 1000).run.status).toBe('running');
    const late = claimStep(run, 'a', 'w', 61_000, 1000);
    expect(late.run.status).toBe('blocked');
    expect(stepOf(late.run, 'a')?.status).toBe('ready');
    expect(late.events[0]).toMatchObject({ type: 'budget.exceeded', limit: 'maxWallMs', max: 60_000 });
  });

  it('resume gives a stopped run as much again of what it reached', () => {
    let run = newRun(plan({ limits: { maxTokens: 1000 } }));
    run = claim(run, 'a', 1);
    run = completeStep(run, 'a', ok(1200), 2, zero).run;
    expect(run.status).toBe('blocked');
    const resumed = resumeRun(run, 3);
    expect(resumed.run.status).toBe('running');
    expect(resumed.run.plan.limits.maxTokens).toBe(2200);
    expect(resumed.events[0]).toMatchObject({
      type: 'run.resumed',
      reason: expect.stringContaining('maxTokens 2200'),
    });
  });
});

describe('step budgets', () => {
  it('a failing step that reached its token budget is blocked (class budget) instead of retried', () => {
    let run = newRun(
      plan({}, [
        { id: 'a', fn: 'f', budget: { maxTokens: 100 } },
        { id: 'b', fn: 'f' },
      ]),
    );
    run = claim(run, 'a', 1);
    run = completeStep(run, 'a', failed(60), 2, zero).run;
    expect(stepOf(run, 'a')?.status).toBe('retry_wait');
    run = claim(run, 'a', 3);
    const t = completeStep(run, 'a', failed(60), 4, zero);
    expect(stepOf(t.run, 'a')).toMatchObject({
      status: 'blocked',
      lastFailureClass: 'budget',
      usage: spent(120),
    });
    expect(t.events).toContainEqual({
      type: 'budget.exceeded',
      limit: 'maxTokens',
      value: 120,
      max: 100,
      stepId: 'a',
    });
    // The rest of the run goes on.
    expect(t.run.status).toBe('running');
  });

  it('maxWallMs of a step counts from its first attempt', () => {
    let run = newRun(plan({}, [{ id: 'a', fn: 'f', budget: { maxWallMs: 1000 } }]));
    run = claim(run, 'a', 100);
    run = completeStep(run, 'a', failed(), 200, zero).run;
    expect(stepOf(run, 'a')?.firstStartedAt).toBe(100);
    const late = claimStep(run, 'a', 'w', 1100, 1000);
    expect(stepOf(late.run, 'a')).toMatchObject({ status: 'blocked', lastFailureClass: 'budget' });
  });
});

describe('side effects', () => {
  it('an interrupted unsafe step is an unknown outcome: blocked, never retried', () => {
    let run = newRun(plan({}, [{ id: 'send', fn: 'f', sideEffect: 'unsafe' }]));
    run = claim(run, 'send', 1);
    const t = expireLease(run, 'send', 5000, zero);
    expect(stepOf(t.run, 'send')).toMatchObject({ status: 'blocked', lastFailureClass: 'unknown_outcome' });
    expect(stepOf(t.run, 'send')?.blockedReason).toContain('baton resolve r1 send --result');
  });

  it('an interrupted idempotent step is retried', () => {
    let run = newRun(plan({}, [{ id: 'send', fn: 'f', sideEffect: 'idempotent' }]));
    run = claim(run, 'send', 1);
    expect(stepOf(expireLease(run, 'send', 5000, zero).run, 'send')?.status).toBe('retry_wait');
  });

  it('resolve: a human supplies the result of a blocked step; its dependents go on', () => {
    let run = newRun(
      plan({}, [
        { id: 'send', fn: 'f', sideEffect: 'unsafe' },
        { id: 'after', fn: 'f', dependsOn: ['send'] },
      ]),
    );
    run = claim(run, 'send', 1);
    run = expireLease(run, 'send', 5000, zero).run;
    expect(run.status).toBe('blocked');
    const t = resolveStep(run, 'send', '{"summary":"sent by hand","outputs":[]}', 6000);
    expect(t.run.status).toBe('running');
    expect(stepOf(t.run, 'send')).toMatchObject({
      status: 'succeeded',
      resultJson: '{"summary":"sent by hand","outputs":[]}',
    });
    expect(stepOf(t.run, 'after')?.status).toBe('ready');
    expect(t.events.map((e) => e.type)).toEqual(['step.resolved', 'run.resumed']);
    expect(() => resolveStep(t.run, 'after', '{}', 7000)).toThrow(/only a blocked or retry_wait step/);
  });
});

describe('fallback', () => {
  const withFallback = () =>
    plan({ defaults: { retry: { maxAttempts: 2, initialDelayMs: 0, maxDelayMs: 0 } } }, [
      { id: 'a', fn: 'primary', fallback: { fn: 'template', args: { text: 'n/a' } } },
      { id: 'b', fn: 'f', dependsOn: ['a'] },
    ]);

  it('runs when the retries are used up; success is degraded and the run goes on', () => {
    let run = newRun(withFallback());
    run = completeStep(claim(run, 'a', 1), 'a', failed(), 2, zero).run;
    const exhausted = completeStep(claim(run, 'a', 3), 'a', failed(), 4, zero);
    expect(stepOf(exhausted.run, 'a')).toMatchObject({ status: 'ready', onFallback: true, tries: 0 });
    expect(exhausted.events.map((e) => e.type)).toContain('step.fallback');
    expect(exhausted.run.status).toBe('running');
    const done = completeStep(claim(exhausted.run, 'a', 5), 'a', ok(), 6, zero);
    expect(stepOf(done.run, 'a')?.status).toBe('degraded');
    expect(done.events.find((e) => e.type === 'step.degraded')).toMatchObject({
      reason: expect.stringContaining('try again'),
    });
    expect(stepOf(done.run, 'b')?.status).toBe('ready');
  });

  it('a fallback that fails too blocks the step, saying so', () => {
    let run = newRun(withFallback());
    for (let i = 0; i < 2; i++) run = completeStep(claim(run, 'a', 1), 'a', failed(), 2, zero).run;
    for (let i = 0; i < 2; i++) run = completeStep(claim(run, 'a', 3), 'a', failed(), 4, zero).run;
    expect(stepOf(run, 'a')?.status).toBe('blocked');
    expect(stepOf(run, 'a')?.blockedReason).toMatch(/^its fallback failed too: failed 2 of 2/);
  });

  it('is never used for an unknown outcome', () => {
    let run = newRun(plan({}, [{ id: 'a', fn: 'f', sideEffect: 'unsafe', fallback: { fn: 'g' } }]));
    run = expireLease(claim(run, 'a', 1), 'a', 5000, zero).run;
    expect(stepOf(run, 'a')).toMatchObject({ status: 'blocked', lastFailureClass: 'unknown_outcome' });
    expect(stepOf(run, 'a')?.onFallback).toBeUndefined();
  });

  it('a step budget reached hands over to the fallback', () => {
    let run = newRun(plan({}, [{ id: 'a', fn: 'f', budget: { maxTokens: 10 }, fallback: { fn: 'g' } }]));
    run = completeStep(claim(run, 'a', 1), 'a', failed(50), 2, zero).run;
    expect(stepOf(run, 'a')).toMatchObject({ status: 'ready', onFallback: true });
  });

  it('a result marked degraded (a fallback model answered) ends the step degraded', () => {
    const run = claim(newRun(plan({}, [{ id: 'a', fn: 'f' }])), 'a', 1);
    const t = completeStep(
      run,
      'a',
      { ...ok(), degraded: 'answered by the fallback model gpt-4o-mini' },
      2,
      zero,
    );
    expect(stepOf(t.run, 'a')?.status).toBe('degraded');
    expect(t.run.status).toBe('succeeded');
  });
});
