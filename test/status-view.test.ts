import { describe, expect, it } from 'vitest';
import { painter } from '../src/cli/colour.js';
import { runStatusLines } from '../src/cli/status-view.js';
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
    expect(noneLines.slice(2)).toEqual([
      'steps: 150 succeeded',
      '150 succeeded steps not listed: baton status r1 --all lists every step',
    ]);

    const every = runStatusLines(runWith([{ stepId: 'a' }, { stepId: 'b' }]), [], painter(false));
    expect(every.some((line) => line.startsWith('steps: ') || line.includes('not listed'))).toBe(false);
    expect(every.filter((line) => /^(STEP|a|b) {2}/.test(line))).toHaveLength(3);
  });
});
