import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffCeilingMs, fullJitterDelayMs } from '../src/core/backoff.js';
import { isBudgetBlock } from '../src/core/draft.js';
import type { StepOutcome } from '../src/core/failure.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { Plan } from '../src/core/plan/types.js';
import { cancelRun, retryStep, skipStep } from '../src/core/run-commands.js';
import {
  FINAL_RUN_STATUSES,
  FINAL_STEP_STATUSES,
  type RunState,
  STEP_STATUSES,
  stepOf,
  stepTally,
} from '../src/core/run-state.js';
import {
  claimStep,
  completeStep,
  deriveRunStatus,
  expireLease,
  initialStepStates,
  type Transition,
} from '../src/core/transitions.js';
import { runStateOf } from './helpers/run-state.js';

function plan(overrides: Record<string, unknown> = {}): Plan {
  return validatePlanObject(
    {
      name: 'p',
      defaults: { retry: { maxAttempts: 3, initialDelayMs: 100, factor: 2, maxDelayMs: 1000 } },
      steps: [
        { id: 'a', fn: 'f' },
        { id: 'b', fn: 'f', dependsOn: ['a'] },
        { id: 'c', fn: 'f', dependsOn: ['a'], delayBeforeMs: 500 },
        { id: 'd', fn: 'f', dependsOn: ['b', 'c'] },
      ],
      ...overrides,
    },
    'test',
  );
}

function newRun(p: Plan = plan(), now = 0): RunState {
  return runStateOf(p, { now });
}

const ok: StepOutcome = { ok: true, summary: 'done', outputs: [] };
const fail = (
  failureClass: 'agent_failed' | 'transient' | 'fatal' | 'invalid',
  message = 'boom',
): StepOutcome => ({ ok: false, failureClass, message });
const zero = () => 0;

function runToEnd(run: RunState, outcomeFor: (stepId: string) => StepOutcome): RunState {
  let now = 1;
  for (let guard = 0; guard < 100 && run.status === 'running'; guard++) {
    const due = run.steps.find(
      (s) => (s.status === 'ready' || s.status === 'retry_wait') && (s.dueAt ?? 0) <= now,
    );
    if (!due) {
      now += 1000;
      continue;
    }
    run = claimStep(run, due.stepId, 'w', now, 1000).run;
    if (run.status !== 'running') break;
    run = completeStep(run, due.stepId, outcomeFor(due.stepId), now + 1, zero).run;
    now += 2;
  }
  return run;
}

describe('state machine', () => {
  it('starts steps without dependencies and waits for delays', () => {
    const steps = initialStepStates(plan(), 1000);
    expect(steps[0]).toMatchObject({ status: 'ready', dueAt: 1000 });
    expect(steps[1]?.status).toBe('pending');
  });

  it('releases dependents with their delay when a step succeeds, and ends succeeded', () => {
    let run = claimStep(newRun(), 'a', 'w', 10, 1000).run;
    const t = completeStep(run, 'a', ok, 20, zero, '{"summary":"done","outputs":[]}');
    run = t.run;
    expect(run.steps[1]).toMatchObject({ status: 'ready', dueAt: 20 });
    expect(run.steps[2]).toMatchObject({ status: 'ready', dueAt: 520 });
    expect(run.steps[3]?.status).toBe('pending');
    expect(t.events.map((e) => e.type)).toEqual(['step.succeeded']);
    expect(runToEnd(run, () => ok).status).toBe('succeeded');
  });

  it('retries a retryable failure with backoff and blocks after maxAttempts', () => {
    let run = claimStep(newRun(), 'a', 'w', 0, 1000).run;
    const first = completeStep(run, 'a', fail('agent_failed', 'exit 1 at 12:00:01'), 10, () => 0.5);
    expect(first.run.steps[0]).toMatchObject({
      status: 'retry_wait',
      dueAt: 10 + 50,
      lastError: 'exit 1 at 12:00:01',
    });
    expect(first.events.map((e) => e.type)).toEqual(['step.failed', 'step.retry_scheduled']);
    run = claimStep(first.run, 'a', 'w', 100, 1000).run;
    run = completeStep(run, 'a', fail('agent_failed', 'different 1'), 110, zero).run;
    run = claimStep(run, 'a', 'w', 200, 1000).run;
    const last = completeStep(run, 'a', fail('agent_failed', 'different 2'), 210, zero);
    expect(last.run.steps[0]?.status).toBe('blocked');
    expect(last.run.steps[0]?.blockedReason).toContain('failed 3 of 3 allowed tries');
    expect(last.run.status).toBe('blocked');
    expect(last.events.map((e) => e.type)).toEqual(['step.failed', 'step.blocked', 'run.blocked']);
  });

  it('blocks fatal and invalid failures at once', () => {
    for (const failureClass of ['fatal', 'invalid'] as const) {
      const run = claimStep(newRun(), 'a', 'w', 0, 1000).run;
      const t = completeStep(run, 'a', fail(failureClass), 5, zero);
      expect(t.run.steps[0]?.status).toBe('blocked');
      expect(t.run.status).toBe('blocked');
    }
  });

  it('stops a no-progress loop before the retry cap (same fingerprint N times)', () => {
    const p = plan({
      defaults: { retry: { maxAttempts: 10, initialDelayMs: 1, maxDelayMs: 1 } },
      limits: { noProgressAfter: 3 },
    });
    let run = newRun(p);
    for (let i = 0; i < 3; i++) {
      run = claimStep(run, 'a', 'w', i * 10, 1000).run;
      // Numbers differ between attempts; the normalised message is the same.
      run = completeStep(
        run,
        'a',
        fail('agent_failed', `timeout after ${100 + i} ms at line ${i}`),
        i * 10 + 5,
        zero,
      ).run;
    }
    expect(run.steps[0]?.status).toBe('blocked');
    expect(run.steps[0]?.blockedReason).toMatch(/^no progress/);
  });

  it('honours a retryAfterMs from the failure instead of backoff', () => {
    const run = claimStep(newRun(), 'a', 'w', 0, 1000).run;
    const t = completeStep(
      run,
      'a',
      { ok: false, failureClass: 'transient', message: 'rate limited', retryAfterMs: 60_000 },
      10,
      () => 0.99,
    );
    expect(t.run.steps[0]?.dueAt).toBe(60_010);
  });

  it('records an expired lease as interrupted and retries it', () => {
    const run = claimStep(newRun(), 'a', 'dead-worker', 0, 1000).run;
    const t = expireLease(run, 'a', 2000, zero);
    expect(t.run.steps[0]).toMatchObject({
      status: 'retry_wait',
      lastFailureClass: 'interrupted',
      leaseOwner: null,
    });
  });

  it('does not spend maxAttempts on interruptions: they have their own budget, retry.maxInterruptions', () => {
    const p = plan({
      limits: { maxSteps: 100 },
      defaults: { retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 1, maxInterruptions: 4 } },
    });
    let run = newRun(p);
    let now = 0;
    const attempt = (owner: string, outcome: StepOutcome | 'lease expires'): Transition => {
      run = claimStep(run, 'a', owner, now + 10, 10).run;
      now += 50;
      const t =
        outcome === 'lease expires'
          ? expireLease(run, 'a', now, zero)
          : completeStep(run, 'a', outcome, now, zero);
      run = t.run;
      return t;
    };
    // Four dead workers in a row (the same lease message every time): neither the tries nor the
    // no-progress rule stop the step.
    for (let i = 1; i <= 4; i++) {
      attempt('dead', 'lease expires');
      expect(run.steps[0]).toMatchObject({ status: 'retry_wait', tries: 0, interruptions: i });
    }
    // The tries are all still there: one real failure is retried.
    attempt('w', fail('agent_failed', 'first'));
    expect(run.steps[0]).toMatchObject({ status: 'retry_wait', tries: 1, interruptions: 4 });
    // A fifth interruption is one too many.
    const t = attempt('dead', 'lease expires');
    expect(t.run.steps[0]?.status).toBe('blocked');
    expect(t.run.steps[0]?.blockedReason).toMatch(
      /^interrupted 5 times \(retry\.maxInterruptions 4\); last: lease/,
    );
    expect(t.events.find((e) => e.type === 'step.blocked')).toMatchObject({ failureClass: 'interrupted' });
    // A human retry starts both budgets afresh.
    const retried = retryStep(t.run, 'a', now + 1).run;
    expect(retried.steps[0]).toMatchObject({ status: 'ready', tries: 0, interruptions: 0 });
  });

  it('defaults retry.maxInterruptions to 10, also for snapshots stored without it', () => {
    const p = plan();
    expect(p.steps[0]?.retry.maxInterruptions).toBe(10);
    const { maxInterruptions: _, ...older } = p.steps[0]!.retry;
    let run = newRun({ ...p, steps: p.steps.map((s) => ({ ...s, retry: older as typeof s.retry })) });
    for (let i = 1; i <= 11; i++) {
      run = claimStep(run, 'a', 'dead', i * 100, 10).run;
      run = expireLease(run, 'a', i * 100 + 50, zero).run;
    }
    expect(run.steps[0]?.blockedReason).toMatch(/^interrupted 11 times \(retry\.maxInterruptions 10\)/);
  });

  it('still blocks an interrupted unsafe step as an unknown outcome, whatever the interruption budget', () => {
    const p = plan({
      steps: [{ id: 'a', fn: 'f', sideEffect: 'unsafe', retry: { maxInterruptions: 5 } }],
    });
    const run = claimStep(newRun(p), 'a', 'dead', 0, 10).run;
    const t = expireLease(run, 'a', 50, zero);
    expect(t.run.steps[0]).toMatchObject({ status: 'blocked', lastFailureClass: 'unknown_outcome' });
  });

  it('stops the run at maxSteps with a budget event', () => {
    const p = plan({ limits: { maxSteps: 1 } });
    let run = claimStep(newRun(p), 'a', 'w', 0, 1000).run;
    run = completeStep(run, 'a', ok, 1, zero).run;
    const t = claimStep(run, 'b', 'w', 2, 1000);
    expect(t.run.status).toBe('blocked');
    expect(t.run.blockedReason).toMatch(/^budget: maxSteps 1/);
    expect(t.events.map((e) => e.type)).toEqual(['budget.exceeded', 'run.blocked']);
    expect(t.run.steps[1]?.status).toBe('ready');
  });

  it('lets a human retry or skip a blocked step, and cancel a run', () => {
    let run = claimStep(newRun(), 'a', 'w', 0, 1000).run;
    run = completeStep(run, 'a', fail('fatal'), 1, zero).run;
    expect(run.status).toBe('blocked');
    const retried = retryStep(run, 'a', 5);
    expect(retried.run.status).toBe('running');
    expect(retried.run.steps[0]).toMatchObject({ status: 'ready', tries: 0, dueAt: 5 });
    const skipped = skipStep(run, 'a', 5);
    expect(skipped.run.steps[1]?.status).toBe('ready');
    expect(skipped.run.status).toBe('running');
    const cancelled = cancelRun(skipped.run, 6);
    expect(cancelled.run.status).toBe('cancelled');
    expect(cancelled.run.steps.every((s) => FINAL_STEP_STATUSES.has(s.status))).toBe(true);
    expect(() => retryStep(cancelled.run, 'b', 7)).toThrow(/cancelled/);
    expect(() => skipStep(newRun(), 'zzz', 1)).toThrow(/unknown|no step/);
  });

  it('refuses to claim a step that is not due', () => {
    expect(() => claimStep(newRun(), 'b', 'w', 0, 1000)).toThrow(/cannot be claimed/);
  });
});

describe('backoff', () => {
  it('grows exponentially up to the cap, and full jitter stays within [0, ceiling]', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.double({ min: 1, max: 10, noNaN: true }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        (initialDelayMs, factor, extra, tries, r) => {
          const policy = { maxAttempts: 3, initialDelayMs, factor, maxDelayMs: initialDelayMs + extra };
          const ceiling = backoffCeilingMs(policy, tries);
          const delay = fullJitterDelayMs(policy, tries, () => r);
          return ceiling <= policy.maxDelayMs && delay >= 0 && delay <= ceiling;
        },
      ),
    );
  });
});

describe('properties of the state machine', () => {
  type Op = {
    kind: 'claim' | 'ok' | 'fail' | 'expire' | 'retry' | 'skip' | 'cancel' | 'tick';
    step: number;
    cls: number;
  };
  const op = fc.record({
    kind: fc.constantFrom('claim', 'ok', 'fail', 'expire', 'retry', 'skip', 'cancel', 'tick'),
    step: fc.integer({ min: 0, max: 3 }),
    cls: fc.integer({ min: 0, max: 3 }),
  }) as fc.Arbitrary<Op>;
  const classes = ['agent_failed', 'transient', 'fatal', 'invalid'] as const;

  function apply(run: RunState, o: Op, now: number): Transition | null {
    const id = run.plan.steps[o.step]!.id;
    const step = stepOf(run, id)!;
    try {
      switch (o.kind) {
        case 'claim':
          return (step.status === 'ready' || step.status === 'retry_wait') &&
            run.status === 'running' &&
            (step.dueAt ?? 0) <= now
            ? claimStep(run, id, 'w', now, 1000)
            : null;
        case 'ok':
          return step.status === 'running' ? completeStep(run, id, ok, now, Math.random, '{}') : null;
        case 'fail':
          return step.status === 'running'
            ? completeStep(run, id, fail(classes[o.cls]!, `e${o.cls}`), now, Math.random)
            : null;
        case 'expire':
          return step.status === 'running' ? expireLease(run, id, now, Math.random) : null;
        case 'retry':
          return retryStep(run, id, now);
        case 'skip':
          return skipStep(run, id, now);
        case 'cancel':
          return cancelRun(run, now);
        default:
          return null;
      }
    } catch (error) {
      // Refused transitions must be refused with a clear error, never half-applied.
      expect((error as Error).message.length).toBeGreaterThan(10);
      return null;
    }
  }

  it('no sequence of events yields an invalid state, and a succeeded step is never scheduled again', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        let run = newRun();
        let now = 0;
        const succeeded = new Set<string>();
        for (const o of ops) {
          now += o.kind === 'tick' ? 2000 : 1;
          const t = apply(run, o, now);
          if (!t) continue;
          run = t.run;
          for (const step of run.steps) {
            expect(STEP_STATUSES).toContain(step.status);
            if (succeeded.has(step.stepId)) expect(step.status).toBe('succeeded');
            if (step.status === 'succeeded') succeeded.add(step.stepId);
            // Due steps have a due time, leased steps a lease, others neither.
            if (step.status === 'ready' || step.status === 'retry_wait') expect(step.dueAt).not.toBeNull();
            if (step.status === 'running') expect(step.leaseOwner).not.toBeNull();
            // A step cancelled while it ran keeps its lease until its worker reports it stopped.
            else if (step.status !== 'cancelled') expect(step.leaseOwner).toBeNull();
            // A step only leaves pending when all its dependencies are satisfied.
            const deps = run.plan.steps.find((s) => s.id === step.stepId)!.dependsOn;
            if (!['pending', 'cancelled', 'skipped'].includes(step.status)) {
              for (const dep of deps)
                expect(['succeeded', 'skipped', 'degraded']).toContain(stepOf(run, dep)!.status);
            }
          }
          const all = run.steps;
          if (run.status === 'succeeded')
            expect(all.every((s) => ['succeeded', 'skipped', 'degraded'].includes(s.status))).toBe(true);
          expect(run.attemptsTotal).toBe(all.reduce((n, s) => n + s.attempt, 0));
          // Transitions carry the run's step tally forward instead of counting every step: it must
          // match a count of a fresh copy, and so must the run status derived from it.
          expect(stepTally(all)).toEqual(stepTally([...all]));
          if (
            !FINAL_RUN_STATUSES.has(run.status) &&
            run.status !== 'awaiting_approval' &&
            !isBudgetBlock(run)
          )
            expect(run.status).toBe(deriveRunStatus([...all]));
        }
      }),
      { numRuns: 300 },
    );
  });
});
