import { describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { RunState } from '../src/core/run-state.js';
import { deriveRunStatus } from '../src/core/transitions.js';
import { approveWaitStep, rejectWaitStep, startWaiting, timeOutWait } from '../src/core/waits.js';
import { runStateOf } from './helpers/run-state.js';

function runOf(steps: unknown[]): RunState {
  const plan = validatePlanObject({ name: 'w', steps }, 'w');
  return runStateOf(plan, { id: 'r' });
}

describe('wait steps (core)', () => {
  it('a run with only waiting work left stays running, and a kept event ends the wait as it starts', () => {
    const run = runOf([
      { id: 'ok', wait: { for: 'approval', timeout: '1h' } },
      { id: 'evt', wait: { for: 'event', event: 'go' } },
    ]);
    const waiting = startWaiting(run, 'ok', 'Approve step ok?', null, 10).run;
    expect(waiting.status).toBe('running');
    expect(waiting.steps[0]).toMatchObject({ status: 'waiting', dueAt: 10 + 3_600_000, leaseOwner: null });
    const taken = startWaiting(waiting, 'evt', 'go', { dataJson: '{"a":1}', at: 5 }, 11);
    expect(taken.run.steps[1]!.status).toBe('succeeded');
    expect(taken.events.map((e) => e.type)).toEqual(['step.waiting', 'event.received']);
    expect(taken.run.status).toBe('running');
  });

  it('a blocked timeout blocks the run until the approval comes; then it goes on', () => {
    const run = runOf([
      { id: 'ok', wait: { for: 'approval', timeout: '1s' } },
      { id: 'next', fn: 'f', dependsOn: ['ok'] },
    ]);
    const waiting = startWaiting(run, 'ok', 'Approve step ok?', null, 0).run;
    const blocked = timeOutWait(waiting, 'ok', 1000).run;
    expect(blocked.status).toBe('blocked');
    const approved = approveWaitStep(blocked, 'ok', { by: 'ann' }, 2000);
    expect(approved.run.status).toBe('running');
    expect(approved.run.steps[1]!.status).toBe('ready');
    expect(approved.events.map((e) => e.type)).toContain('run.resumed');
  });

  it('a rejection skips the chain after it but not a sibling branch, and the run succeeds once the rest is done', () => {
    const run = runOf([
      { id: 'ok', wait: { for: 'approval' } },
      { id: 'send', fn: 'f', dependsOn: ['ok'] },
      { id: 'log', fn: 'f', dependsOn: ['send'] },
    ]);
    const waiting = startWaiting(run, 'ok', 'p', null, 0).run;
    const rejected = rejectWaitStep(waiting, 'ok', { by: 'ann', comment: 'no' }, 5);
    expect(rejected.run.steps.map((s) => s.status)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(rejected.run.status).toBe('succeeded');
  });
});

describe('a run with a waiting step and a blocked one', () => {
  it('is blocked, so the blocked step is reported; approving the wait lets the rest go on', () => {
    const run = runOf([
      { id: 'ok', wait: { for: 'approval' } },
      { id: 'after', fn: 'f', dependsOn: ['ok'] },
      { id: 'other', fn: 'f' },
    ]);
    const waiting = startWaiting(run, 'ok', 'p', null, 0).run;
    const blocked: RunState = {
      ...waiting,
      steps: waiting.steps.map((s) =>
        s.stepId === 'other' ? { ...s, status: 'blocked', blockedReason: 'x' } : s,
      ),
    };
    expect(deriveRunStatus(blocked.steps)).toBe('blocked');
    expect(deriveRunStatus(waiting.steps)).toBe('running');
    const approved = approveWaitStep({ ...blocked, status: 'blocked' }, 'ok', { by: 'ann' }, 5).run;
    expect(approved.status).toBe('running');
    expect(approved.steps[1]!.status).toBe('ready');
  });
});

describe('baton skip of a waiting step', () => {
  it('ends the wait: the step is skipped and the steps after it run', async () => {
    const { skipStep } = await import('../src/core/run-commands.js');
    const run = runOf([
      { id: 'ok', wait: { for: 'approval' } },
      { id: 'after', fn: 'f', dependsOn: ['ok'] },
    ]);
    const skipped = skipStep(startWaiting(run, 'ok', 'p', null, 0).run, 'ok', 5).run;
    expect(skipped.steps.map((s) => s.status)).toEqual(['skipped', 'ready']);
  });
});
