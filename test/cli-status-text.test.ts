/**
 * `baton status <run>` as text, through the real binary: the tokens and cost a run used and what
 * is left of its budget, a shadow run marked as one, and why a step was skipped listed apart from
 * the errors (a `when` reason sat under LAST ERROR).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { agentCommand, expectExit, removeTempDirs, runBaton, writePlan } from './helpers/cli.js';
import { planDir } from './helpers/plans.js';

afterAll(() => removeTempDirs());

describe('baton status <run> as text', () => {
  it('shows usage, budget left, a shadow run and skip reasons apart from errors', async () => {
    const { dir, home } = planDir('baton-status-text-');
    const file = writePlan(dir, {
      name: 'daily-report',
      // agent-costly reports 1,000 input and 200 output tokens and $0.40, as claude -p does.
      defaults: { agent: { command: agentCommand('agent-costly') } },
      limits: { maxTokens: 10_000, maxCostUsd: 2 },
      steps: [
        { id: 'research', instruction: 'research' },
        { id: 'fix', dependsOn: ['research'], when: 'steps.research.result == "nope"', instruction: 'fix' },
        {
          id: 'send',
          dependsOn: ['fix'],
          instruction: 'send',
          sideEffect: 'unsafe',
          shadowResult: { sent: false },
        },
      ],
    });
    expectExit(await runBaton(['run', file, '--id', 's1', '--shadow'], { home }), 0);
    const lines = expectExit(await runBaton(['status', 's1'], { home }), 0).stdout.split('\n');
    expect(lines[0]).toMatch(/^run s1 {2}plan daily-report \(shadow\) {2}succeeded {2}3\/3 steps done/);
    expect(lines).toContain('usage 1,200 tokens (1000 in, 200 out), $0.4000');
    expect(lines).toContain('budget left 8,800 of 10,000 tokens, $1.6000 of $2.0000');
    expect(lines).toContain(
      'shadow run: steps with a side effect are recorded (step.would_execute), not executed',
    );
    const header = lines.find((line) => line.startsWith('STEP '))!;
    const fixRow = lines.find((line) => line.startsWith('fix '))!;
    // The LAST ERROR cell of the skipped step is empty: its reason is not an error.
    expect(fixRow.length).toBeLessThanOrEqual(header.indexOf('LAST ERROR'));
    expect(fixRow).toMatch(/^fix +skipped /);
    expect(lines).toContain('fix skipped: when steps.research.result == "nope" was false');

    // A run without a budget says where one is set.
    const plain = writePlan(dir, {
      name: 'plain',
      defaults: { agent: { command: agentCommand('agent-succeed') } },
      steps: [{ id: 'a', instruction: 'a' }],
    });
    expectExit(await runBaton(['run', plain, '--id', 'p1'], { home }), 0);
    const text = expectExit(await runBaton(['status', 'p1'], { home }), 0).stdout;
    expect(text).toContain('budget left none set (limits.maxTokens, limits.maxCostUsd, limits.maxWallMs)');
    expect(text).not.toContain('shadow');
  });
});
