import { describe, expect, it } from 'vitest';
import { painter } from '../src/cli/colour.js';
import { addSkipReasons, runStatusLines } from '../src/cli/status-view.js';
import type { StoredEvent } from '../src/core/events.js';
import type { RunDetail, RunWithSteps } from '../src/store/store.js';

function runWith(steps: { stepId: string; title?: string; lastError?: string | null }[]): RunDetail {
  return {
    id: 'r1',
    planName: 'p',
    status: 'running',
    blockedReason: null,
    attemptsTotal: 1,
    stepCounts: { running: steps.length },
    workspace: '/w',
    plan: { name: 'p', steps: steps.map((step) => ({ id: step.stepId, dependsOn: [] })) },
    steps: steps.map((step) => ({
      stepId: step.stepId,
      title: step.title ?? step.stepId,
      status: 'running',
      attempt: 1,
      dueAt: null,
      lastError: step.lastError ?? null,
      blockedReason: null,
    })),
  } as unknown as RunDetail;
}

describe('runStatusLines', () => {
  it('shows the first line of a last error and of a title, cut by characters, not UTF-16 units', () => {
    const long = `${'é'.repeat(79)}😀😀 and more`;
    const lines = runStatusLines(
      runWith([
        { stepId: 'a', title: `${'😀'.repeat(45)}`, lastError: `${long}\nsecond line` },
        { stepId: 'b', title: 'short', lastError: 'exit 1\nstack' },
      ]),
      [],
      painter(false),
    );
    const rowA = lines.find((line) => line.startsWith('a '))!;
    const rowB = lines.find((line) => line.startsWith('b '))!;
    expect(rowA).toContain(`${'😀'.repeat(40)} `);
    expect(rowA).not.toContain('😀'.repeat(41));
    expect(rowA.endsWith(`${'é'.repeat(79)}😀`)).toBe(true);
    expect(rowB.endsWith('exit 1')).toBe(true);
    expect(lines.join('\n')).not.toContain('second line');
  });
});

describe('runStatusLines of a run whose steps are not all listed', () => {
  it('counts every status and says what is not listed; a run with every step has neither line', () => {
    const blocked = { stepId: 'b7', lastError: 'exit 2' };
    const some = {
      ...runWith([blocked]),
      status: 'blocked',
      stepCounts: { succeeded: 140, pending: 9, blocked: 1 },
    } as RunWithSteps;
    some.steps[0]!.status = 'blocked';
    some.steps[0]!.blockedReason = 'retries used up';
    const lines = runStatusLines(some, [], painter(false));
    expect(lines).toContain('steps: 9 pending, 140 succeeded, 1 blocked');
    expect(lines.filter((line) => /^(STEP|b7) {2}/.test(line))).toHaveLength(2);
    expect(lines).toContain('149 pending/succeeded steps not listed: baton status r1 --all lists every step');
    expect(lines).toContain('b7 is blocked: retries used up');

    const none = { ...some, status: 'succeeded', stepCounts: { succeeded: 150 }, steps: [] } as RunWithSteps;
    const noneLines = runStatusLines(none, [], painter(false));
    expect(noneLines.some((line) => line.startsWith('STEP'))).toBe(false);
    expect(noneLines.slice(4)).toEqual([
      'steps: 150 succeeded',
      '150 succeeded steps not listed: baton status r1 --all lists every step',
    ]);

    const every = runStatusLines(runWith([{ stepId: 'a' }, { stepId: 'b' }]), [], painter(false));
    expect(every.some((line) => line.startsWith('steps: ') || line.includes('not listed'))).toBe(false);
    expect(every.filter((line) => /^(STEP|a|b) {2}/.test(line))).toHaveLength(3);
  });
});

describe('runStatusLines: usage, budget, shadow runs and skip reasons', () => {
  const at = Date.UTC(2026, 0, 5, 8);

  it('shows tokens and cost, what is left of each limit the plan sets, and says where to set one', () => {
    const run = {
      ...runWith([{ stepId: 'a' }]),
      createdAt: at,
      finishedAt: null,
      usage: { inputTokens: 7000, outputTokens: 1400, costUsd: 0.84 },
    } as RunWithSteps;
    run.plan = {
      ...run.plan,
      limits: { maxTokens: 10_000, maxCostUsd: 1, maxWallMs: 600_000 },
    } as RunWithSteps['plan'];
    const lines = runStatusLines(run, [], painter(false), { now: at + 240_000 });
    expect(lines[2]).toBe('usage 8,400 tokens (7000 in, 1400 out), $0.8400');
    expect(lines[3]).toBe(
      'budget left 1,600 of 10,000 tokens, $0.1600 of $1.0000, 6 m 0 s of 10 m 0 s wall time',
    );
    run.usage = { inputTokens: 9000, outputTokens: 1000, costUsd: 0.5 };
    run.plan.limits = { maxTokens: 10_000 } as RunWithSteps['plan']['limits'];
    expect(runStatusLines(run, [], painter(false), { now: at })[3]).toBe(
      'budget left 0 of 10,000 tokens (maxTokens reached)',
    );
    run.plan.limits = {} as RunWithSteps['plan']['limits'];
    expect(runStatusLines(run, [], painter(false), { now: at })[3]).toBe(
      'budget left none set (limits.maxTokens, limits.maxCostUsd, limits.maxWallMs)',
    );
  });

  it('marks a shadow run', () => {
    const run = runWith([{ stepId: 'a' }]);
    run.plan = { ...run.plan, shadow: true };
    const lines = runStatusLines(run, [], painter(false), { now: at });
    expect(lines[0]).toMatch(/^run r1 {2}plan p \(shadow\) {2}running/);
    expect(lines).toContain(
      'shadow run: steps with a side effect are recorded (step.would_execute), not executed',
    );
    expect(runStatusLines(runWith([{ stepId: 'a' }]), [], painter(false))[0]).not.toContain('shadow');
  });

  it("lists why steps were skipped apart from errors: a `when` reason is not a last error, a tolerated item's error is", () => {
    const run = runWith([
      { stepId: 'fix', lastError: 'when steps.check.result.passed == false was false' },
      { stepId: 'each[1]', lastError: 'exit 3: page gone' },
      { stepId: 'by-hand', lastError: 'exit 1: flaky' },
    ]);
    for (const step of run.steps) step.status = 'skipped';
    const event = (seq: number, stepId: string, reason?: string) =>
      ({ seq, runId: 'r1', at, type: 'step.skipped', stepId, ...(reason ? { reason } : {}) }) as StoredEvent;
    const skips = addSkipReasons([
      event(1, 'fix', 'an older reason'),
      event(2, 'fix', 'when steps.check.result.passed == false was false'),
      event(3, 'each[1]', 'a tolerated failure of fan-out each: exit 3: page gone'),
      event(4, 'by-hand'),
    ]);
    const lines = runStatusLines(run, [], painter(false), { now: at, skips });
    const row = (id: string) => lines.find((line) => line.startsWith(`${id} `))!;
    expect(row('fix').trimEnd()).toMatch(/^fix +skipped +1 +-$/);
    expect(row('each[1]')).toMatch(/exit 3: page gone$/);
    expect(row('by-hand')).toMatch(/exit 1: flaky$/);
    expect(lines).toContain('fix skipped: when steps.check.result.passed == false was false');
    expect(lines).toContain('each[1] skipped: a tolerated failure of fan-out each: exit 3: page gone');
    expect(lines).toContain('by-hand skipped by a person (baton skip)');
  });
});
