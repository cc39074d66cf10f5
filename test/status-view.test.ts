import { describe, expect, it } from 'vitest';
import { painter } from '../src/cli/colour.js';
import { runStatusLines } from '../src/cli/status-view.js';
import type { RunDetail } from '../src/store/store.js';

function runWith(steps: { stepId: string; title?: string; lastError?: string | null }[]): RunDetail {
  return {
    id: 'r1',
    planName: 'p',
    status: 'running',
    blockedReason: null,
    attemptsTotal: 1,
    stepCounts: { running: steps.length },
    workspace: '/w',
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
