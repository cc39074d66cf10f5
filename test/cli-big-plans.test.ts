/**
 * 10,000-step plans through the real `baton` command: one mistake is refused with a bounded
 * message, and the plan without it is accepted. No timing here: how fast and how small the
 * refusals are is measured in bench/workloads/hostile-plans.mjs.
 */
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  agentCommand,
  expectExit,
  expectRefused,
  removeTempDirs,
  runPlanFile,
  tempDir,
  writePlan,
} from './helpers/cli.js';

const TEST_TIMEOUT = 60_000;

afterAll(() => removeTempDirs());

const goodAgent = () => ({ agent: { command: agentCommand('agent-succeed') } });

describe('10,000-step plans with one mistake are refused with a bounded message', () => {
  /** Blocks of a hub, 98 workers that depend on it and a merge that depends on them all. */
  function bigPlan(): { name: string; defaults: object; limits: object; steps: Record<string, unknown>[] } {
    const steps: Record<string, unknown>[] = [];
    for (let block = 0; block < 100; block++) {
      const hub = `hub-${block}`;
      steps.push({
        id: hub,
        instruction: 'plan',
        ...(block > 0 ? { dependsOn: [`merge-${block - 1}`] } : {}),
      });
      const workers = Array.from({ length: 98 }, (_, w) => `w-${block}-${w}`);
      for (const id of workers)
        steps.push({ id, instruction: `work on {{steps.${hub}.summary}}`, dependsOn: [hub] });
      steps.push({
        id: `merge-${block}`,
        instruction: `merge after {{steps.${hub}.summary}}`,
        dependsOn: workers,
      });
    }
    return { name: 'big', defaults: goodAgent(), limits: { maxSteps: 100_000 }, steps };
  }

  it(
    'one unknown dependsOn: one line naming the step, the id and a few known ones',
    async () => {
      const dir = tempDir('baton-hostile-big-');
      const plan = bigPlan();
      plan.steps[5_000]!.dependsOn = ['nope'];
      writePlan(dir, plan, { name: 'big.json', format: 'json' });
      const { result, home } = await runPlanFile(dir, 'big.json');
      expectRefused(
        result,
        /^baton: big\.json: steps\.hub-50\.dependsOn\[0\]: unknown step "nope" \(known: hub-0, w-0-0, /,
      );
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr.length).toBeLessThan(1_000);
      expect(existsSync(home)).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    'a cycle through all 10,000 steps: a few steps named and how many',
    async () => {
      const dir = tempDir('baton-hostile-cycle-');
      const steps = Array.from({ length: 10_000 }, (_, i) => ({
        id: `s${i}`,
        instruction: 'x',
        dependsOn: [`s${(i + 9_999) % 10_000}`],
      }));
      writePlan(dir, { name: 'cycle', defaults: goodAgent(), steps }, { name: 'cycle.json', format: 'json' });
      const { result, home } = await runPlanFile(dir, 'cycle.json');
      expectRefused(
        result,
        'baton: cycle.json: steps.s0.dependsOn: cycle of 10000 steps: s0 -> s9999 -> s9998 -> s9997 -> s9996 -> s9995 -> ... (9991 more) -> s3 -> s2 -> s1 -> s0',
      );
      expect(result.stderr.length).toBeLessThan(1_000);
      expect(existsSync(home)).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    '10,000 bad references: the first 20 shown and how many more',
    async () => {
      const dir = tempDir('baton-hostile-many-');
      const plan = bigPlan();
      for (const step of plan.steps) step.instruction = 'use {{steps.nowhere.summary}}';
      writePlan(dir, plan, { name: 'many.json', format: 'json' });
      const { result } = await runPlanFile(dir, 'many.json');
      expectRefused(
        result,
        /^baton: many\.json: 10000 problems\n/,
        'many.json: ... and 9980 more (fix these first)',
      );
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(22);
    },
    TEST_TIMEOUT,
  );

  it(
    'the same plan without the mistake is accepted and stored',
    async () => {
      const dir = tempDir('baton-hostile-big-');
      writePlan(dir, bigPlan(), { name: 'big.json', format: 'json' });
      const { result } = await runPlanFile(dir, 'big.json');
      expectExit(result, 0);
      expect(result.stdout).toContain('(10000 steps)');
    },
    TEST_TIMEOUT,
  );
});
