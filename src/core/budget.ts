import type { BudgetLimit } from './events.js';
import type { StepUsage } from './failure.js';
import type { Budget } from './plan/types.js';

/** A limit a run or step reached. */
export interface BudgetBreach {
  limit: BudgetLimit;
  value: number;
  max: number;
}

export const NO_USAGE: Readonly<StepUsage> = Object.freeze({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

export function addUsage(a: StepUsage | undefined, b: StepUsage | undefined): StepUsage {
  if (!b) return a ?? { ...NO_USAGE };
  const base = a ?? NO_USAGE;
  return {
    inputTokens: base.inputTokens + b.inputTokens,
    outputTokens: base.outputTokens + b.outputTokens,
    costUsd: base.costUsd + b.costUsd,
  };
}

/**
 * The first limit of `budget` reached by `usage` and by the time elapsed since `since`, or null.
 * Reaching a limit counts (`>=`): a run with maxTokens 1000 that has used 1000 stops.
 */
export function budgetBreach(
  budget: Budget | undefined,
  usage: StepUsage | undefined,
  since: number | null | undefined,
  now: number,
): BudgetBreach | null {
  if (!budget) return null;
  if (
    budget.maxWallMs !== undefined &&
    since !== null &&
    since !== undefined &&
    now - since >= budget.maxWallMs
  ) {
    return { limit: 'maxWallMs', value: now - since, max: budget.maxWallMs };
  }
  const used = usage ?? NO_USAGE;
  const tokens = used.inputTokens + used.outputTokens;
  if (budget.maxTokens !== undefined && tokens >= budget.maxTokens) {
    return { limit: 'maxTokens', value: tokens, max: budget.maxTokens };
  }
  if (budget.maxCostUsd !== undefined && used.costUsd >= budget.maxCostUsd) {
    return { limit: 'maxCostUsd', value: used.costUsd, max: budget.maxCostUsd };
  }
  return null;
}

/** `maxTokens 1000 reached (1042 used)`, with units for time and money. */
export function describeBreach(breach: BudgetBreach): string {
  const format = (n: number) =>
    breach.limit === 'maxCostUsd'
      ? `$${n.toFixed(4)}`
      : breach.limit === 'maxWallMs'
        ? `${Math.round(n)} ms`
        : String(n);
  return `${breach.limit} ${format(breach.max)} reached (${format(breach.value)} used)`;
}

/** What is left of one limit a budget sets: `left` of `max` (0 once reached), in the limit's unit. */
export interface BudgetLeft {
  limit: Exclude<BudgetLimit, 'maxSteps'>;
  left: number;
  max: number;
}

/**
 * What is left of each limit `budget` sets after `usage` and `elapsedMs` of wall-clock time, in
 * the order tokens, cost, time; empty when it sets none. Counted as budgetBreach counts.
 */
export function budgetLeft(
  budget: Budget | undefined,
  usage: StepUsage | undefined,
  elapsedMs: number,
): BudgetLeft[] {
  if (!budget) return [];
  const used = usage ?? NO_USAGE;
  const left: BudgetLeft[] = [];
  const add = (limit: BudgetLeft['limit'], max: number | undefined, value: number) => {
    if (max !== undefined) left.push({ limit, left: Math.max(0, max - value), max });
  };
  add('maxTokens', budget.maxTokens, used.inputTokens + used.outputTokens);
  add('maxCostUsd', budget.maxCostUsd, used.costUsd);
  add('maxWallMs', budget.maxWallMs, elapsedMs);
  return left;
}
