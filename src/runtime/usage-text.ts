import type { BudgetLeft } from '../core/budget.js';
import type { StepUsage } from '../core/failure.js';
import { formatDuration, groupedNumber } from './format.js';

/** How the CLI and the console write tokens, cost and what is left of a budget. */

/** `1,200 tokens (1000 in, 200 out), $0.4000`; `-` when nothing was reported. */
export function usageText(usage: StepUsage | null | undefined): string {
  if (!usage) return '-';
  const tokens = usage.inputTokens + usage.outputTokens;
  return `${groupedNumber(tokens)} tokens (${usage.inputTokens} in, ${usage.outputTokens} out), $${usage.costUsd.toFixed(4)}`;
}

/** `left of max` in each limit's unit. */
const LEFT_TEXT: Record<BudgetLeft['limit'], (left: number, max: number) => string> = {
  maxTokens: (left, max) => `${groupedNumber(left)} of ${groupedNumber(max)} tokens`,
  maxCostUsd: (left, max) => `$${left.toFixed(4)} of $${max.toFixed(4)}`,
  maxWallMs: (left, max) => `${formatDuration(left)} of ${formatDuration(max)} wall time`,
};

/**
 * `1,600 of 10,000 tokens, $0.1600 of $1.0000, 6 m 0 s of 10 m 0 s wall time` (a limit reached
 * says so), or where to set one when the plan sets none.
 */
export function budgetLeftText(left: readonly BudgetLeft[]): string {
  if (left.length === 0) return 'none set (limits.maxTokens, limits.maxCostUsd, limits.maxWallMs)';
  return left
    .map(
      ({ limit, left: rest, max }) =>
        `${LEFT_TEXT[limit](rest, max)}${rest === 0 ? ` (${limit} reached)` : ''}`,
    )
    .join(', ');
}
