import { describe, expect, it } from 'vitest';
import type { StepOutcome } from '../src/core/failure.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { cancelRun } from '../src/core/run-commands.js';
import { type RunState, stepOf } from '../src/core/run-state.js';
import { settleReport } from '../src/core/settle-report.js';
import { claimStep, expireLease } from '../src/core/transitions.js';
import { runStateOf } from './helpers/run-state.js';

const plan = validatePlanObject(
  {
    name: 'p',
    defaults: { retry: { maxAttempts: 3, initialDelayMs: 0, maxDelayMs: 0, maxInterruptions: 0 } },
    steps: [
      { id: 'a', fn: 'f' },
      { id: 'b', fn: 'f', dependsOn: ['a'] },
    ],
  },
  'test',
);
const random = () => 0;
const usage = { inputTokens: 100, outputTokens: 20, costUsd: 0.5 };
const ok: StepOutcome = { ok: true, summary: 'done', outputs: [], value: { n: 1 }, usage };

/** A run whose step `a` is claimed by w1 at 10 (attempt 1). */
function claimedRun(): RunState {
  const run: RunState = runStateOf(plan);
  return claimStep(run, 'a', 'w1', 10, 1000).run;
}
const report = { stepId: 'a', attempt: 1, owner: 'w1', startedAt: 10, outcome: ok };

describe('settleReport', () => {
  it("commits the lease holder's report: the step's result is stored, its tokens counted, its successor due", () => {
    const { live, transition } = settleReport(claimedRun(), report, 50, random);
    expect(live).toBe(true);
    const run = transition!.run;
    expect(stepOf(run, 'a')).toMatchObject({ status: 'succeeded', usage });
    expect(JSON.parse(stepOf(run, 'a')!.resultJson!)).toEqual({
      summary: 'done',
      outputs: [],
      value: { n: 1 },
    });
    expect(run.usage).toEqual(usage);
    expect(stepOf(run, 'b')).toMatchObject({ status: 'ready', dueAt: 50 });
  });

  it('discards a report whose lease was lost, yet counts its tokens against the step and the run, once', () => {
    // The lease ran out and the interruption blocked the step (maxInterruptions 0) at 2000.
    const reclaimed = expireLease(claimedRun(), 'a', 2000, random).run;
    expect(stepOf(reclaimed, 'a')?.status).toBe('blocked');
    const { live, transition } = settleReport(reclaimed, report, 3000, random);
    expect(live).toBe(false);
    expect(transition!.changedSteps).toEqual(['a']);
    expect(transition!.events).toEqual([]);
    expect(transition!.run.usage).toEqual(usage);
    // The step's state is as it was (its updatedAt says when it was blocked), its tokens added.
    expect(stepOf(transition!.run, 'a')).toEqual({ ...stepOf(reclaimed, 'a'), usage });
    // Its attempt row holds the tokens already (the same report sent again): nothing changes.
    expect(settleReport(reclaimed, report, 3000, random, true)).toEqual({ live: false, transition: null });
    // No tokens to count: nothing changes either.
    const { usage: _none, ...noUsage } = ok;
    expect(settleReport(reclaimed, { ...report, outcome: noUsage }, 3000, random).transition).toBeNull();
  });

  it('releases the lease a cancelled step kept for flow control, and counts its tokens, in one transition', () => {
    const cancelled = cancelRun(claimedRun(), 20).run;
    expect(stepOf(cancelled, 'a')).toMatchObject({ status: 'cancelled', leaseOwner: 'w1' });
    const { live, transition } = settleReport(cancelled, report, 30, random);
    expect(live).toBe(false);
    expect(stepOf(transition!.run, 'a')).toMatchObject({
      status: 'cancelled',
      leaseOwner: null,
      leaseExpiresAt: null,
      usage,
    });
    expect(transition!.run).toMatchObject({ status: 'cancelled', usage });
    // Another owner's report of that attempt releases nothing.
    expect(
      stepOf(settleReport(cancelled, { ...report, owner: 'w2' }, 30, random).transition!.run, 'a')
        ?.leaseOwner,
    ).toBe('w1');
  });
});
