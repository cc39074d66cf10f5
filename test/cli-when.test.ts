/**
 * `when` through the built `baton` command: a stored run driven by one `baton check` goes past a
 * step its condition skips (a step without dependencies, decided over the run's inputs, included),
 * and a plan whose condition names a step it does not depend on is refused with exit 2 and
 * nothing stored.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  expectExit,
  expectRefused,
  readCounts,
  removeTempDirs,
  runBaton,
  runStatus,
  timeline,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir } from './helpers/plans.js';

afterEach(removeTempDirs);

const reportSteps = (translateWhen: string) => [
  { id: 'translate', instruction: 'translate', when: translateWhen },
  { id: 'fetch', instruction: 'fetch', dependsOn: ['translate'] },
  { id: 'check', instruction: 'check', dependsOn: ['fetch'] },
  {
    id: 'fix-report',
    instruction: 'fix',
    dependsOn: ['check'],
    when: 'steps.check.result.contains("FAILED")',
  },
  { id: 'send', instruction: 'send', dependsOn: ['fix-report'] },
];

describe('baton with when', () => {
  it('one baton check drives a run past the steps its conditions skip, and says why', async () => {
    const { dir, home } = planDir();
    const counts = join(dir, 'counts');
    const plan = fixturePlan(
      reportSteps('inputs.market != "eu"'),
      { inputs: { market: null } },
      'agent-count',
    );
    const file = writePlan(dir, plan);
    const env = { COUNT_FILE: counts };
    expectExit(
      await runBaton(['run', file, '--id', 'w1', '--input', 'market=eu', '--detach'], { home, env }),
      0,
    );
    expectExit(await runBaton(['check'], { home, env }), 0);
    expect(readCounts(counts).map((c) => c.step)).toEqual(['fetch', 'check', 'send']);
    const run = await runStatus(home, 'w1');
    expect(run.status).toBe('succeeded');
    const skipped = (await timeline(home, 'w1')).filter((event) => event.type === 'step.skipped');
    expect(skipped).toEqual([
      expect.objectContaining({ stepId: 'translate', reason: 'when inputs.market != "eu" was false' }),
      expect.objectContaining({
        stepId: 'fix-report',
        reason: 'when steps.check.result.contains("FAILED") was false',
      }),
    ]);
  });

  it('refuses a condition on a step it does not depend on: exit 2, the file, the field, the fix', async () => {
    const { dir, home } = planDir();
    const steps = reportSteps('true');
    steps[4] = { ...steps[4]!, when: 'steps.check.result.contains("FAILED")' };
    const file = writePlan(dir, fixturePlan(steps));
    const result = await runBaton(['run', file, '--detach'], { home });
    expectRefused(
      result,
      `${file}: steps.send.when: names step "check", which "send" does not depend on: add "check" to steps.send.dependsOn`,
    );
    expect(existsSync(join(home, 'baton.db'))).toBe(false);
  });
});
