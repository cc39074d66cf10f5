import { describe, expect, it } from 'vitest';
import { compareDueSteps, type DueStep, pushDueSteps } from '../src/core/due-order.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { Plan } from '../src/core/plan/types.js';
import {
  claimRankAt,
  DEFAULT_PRIORITY_AGING_MS,
  effectivePriority,
  stepPriority,
} from '../src/core/priority.js';
import { runStateOf } from './helpers/run-state.js';

const AGING = DEFAULT_PRIORITY_AGING_MS;

/** The due step of a one-step run `runId` of priority `priority`, due at `dueAt`. */
function due(runId: string, priority: number, dueAt: number, agingMs = AGING): DueStep {
  return { runId, stepId: 'a', dueAt, rank: claimRankAt(dueAt, priority, agingMs), position: 0 };
}

const order = (...steps: DueStep[]) => [...steps].sort(compareDueSteps).map((step) => step.runId);

describe('priority: the claim order', () => {
  it('higher priority first, then due time, then run id, then plan order', () => {
    expect(order(due('low', 0, 1000), due('high', 9, 2000), due('mid', 5, 1500))).toEqual([
      'high',
      'mid',
      'low',
    ]);
    expect(order(due('b', 3, 1000), due('a', 3, 1000), due('c', 3, 900))).toEqual(['c', 'a', 'b']);
    const first = { ...due('r', 0, 5), stepId: 'x', position: 1 };
    const second = { ...due('r', 0, 5), stepId: 'y', position: 0 };
    expect([first, second].sort(compareDueSteps).map((s) => s.stepId)).toEqual(['y', 'x']);
  });

  it('aging: a due step of priority 0 waits at most the aging period behind higher ones', () => {
    // A priority-0 step due at 0; priority-9 steps that become due later, on an injected clock.
    expect(order(due('old', 0, 0), due('new', 9, AGING - 1))).toEqual(['new', 'old']);
    expect(order(due('old', 0, 0), due('new', 9, AGING + 1))).toEqual(['old', 'new']);
    // Priority 5 jumps 5/9 of the period.
    const jump = Math.round((5 * AGING) / 9);
    expect(order(due('old', 0, 0), due('new', 5, jump - 1))).toEqual(['new', 'old']);
    expect(order(due('old', 0, 0), due('new', 5, jump + 1))).toEqual(['old', 'new']);
    // With another aging period, the same rule over it.
    expect(order(due('old', 0, 0, 60_000), due('new', 9, 59_000, 60_000))).toEqual(['new', 'old']);
    expect(order(due('old', 0, 0, 60_000), due('new', 9, 61_000, 60_000))).toEqual(['old', 'new']);
  });

  it('effective priority rises by 9 per aging period due; the claim rank orders by it', () => {
    expect(effectivePriority(0, 1000, 1000, AGING)).toBe(0);
    expect(effectivePriority(0, 1000, 1000 + AGING / 3, AGING)).toBeCloseTo(3);
    expect(effectivePriority(0, 1000, 1000 + AGING, AGING)).toBe(9);
    expect(effectivePriority(4, 1000, 500, AGING)).toBe(4);
    // At any now, the lower claim rank is the higher effective priority.
    const now = 5 * AGING;
    const steps = [
      [0, 0],
      [9, AGING * 4],
      [3, AGING],
      [7, AGING * 3],
    ] as const;
    const byRank = [...steps].sort((a, b) => claimRankAt(a[1], a[0], AGING) - claimRankAt(b[1], b[0], AGING));
    const byEffective = [...steps].sort(
      (a, b) => effectivePriority(b[0], b[1], now, AGING) - effectivePriority(a[0], a[1], now, AGING),
    );
    expect(byRank).toEqual(byEffective);
  });

  it("a step's own priority wins over its run's, which wins over 0", () => {
    const plan: Plan = {
      ...validatePlanObject(
        {
          name: 'p',
          steps: [
            { id: 'a', fn: 'f' },
            { id: 'b', fn: 'f', priority: 2 },
          ],
        },
        'test',
      ),
      priority: 7,
    };
    expect(stepPriority(plan, 0)).toBe(7);
    expect(stepPriority(plan, 1)).toBe(2);
    expect(stepPriority({ steps: plan.steps }, 0)).toBe(0);
    const [a, b] = pushDueSteps(runStateOf(plan, { now: 100 }), 100, []);
    expect(a!.rank).toBe(claimRankAt(100, 7, AGING));
    expect(b!.rank).toBe(claimRankAt(100, 2, AGING));
  });

  it('a priority outside 0..9 is PLAN_INVALID naming the field', () => {
    expect(() =>
      validatePlanObject({ name: 'p', steps: [{ id: 'a', fn: 'f', priority: 10 }] }, 'test'),
    ).toThrow(/steps\.a\.priority: 10 is not a priority/);
    expect(() =>
      validatePlanObject({ name: 'p', priority: 1.5, steps: [{ id: 'a', fn: 'f' }] }, 'test'),
    ).toThrow(/priority: 1\.5 is not a priority/);
  });
});
