import type { Plan } from './plan/types.js';

/**
 * Priority of runs and steps: 0 (default) to 9, higher first. Claims take due steps by their
 * claim rank (`claimRankAt`): the due time moved earlier by `priority / 9` of the aging period. Seen
 * from a waiting step, that is an effective priority which rises with the time it has been due
 * (`effectivePriority`): after one aging period even a priority-0 step ranks as a priority-9 step
 * that has just become due, so a due step never waits longer than the aging period behind work of
 * higher priority that became due after it. One rule, applied by both stores' claims.
 */

export const MIN_PRIORITY = 0;
export const MAX_PRIORITY = 9;
export const DEFAULT_PRIORITY_AGING_MS = 10 * 60_000;

/** The plan snapshot of a run of priority `priority` (0: none written). */
export function withPriority(plan: Plan, priority: number): Plan {
  const { priority: _old, ...rest } = plan;
  return priority === 0 ? rest : { ...rest, priority };
}

/** Whether `value` is a priority (a whole number from 0 to 9). */
export function isPriority(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= MIN_PRIORITY && (value as number) <= MAX_PRIORITY;
}

/** The priority of the step at `position`: its own, else its run's (the plan snapshot's), else 0. */
export function stepPriority(plan: Pick<Plan, 'priority' | 'steps'>, position: number): number {
  return plan.steps[position]?.priority ?? plan.priority ?? MIN_PRIORITY;
}

/** The aging period of a run: BATON_PRIORITY_AGING as it was when the run started, kept in its snapshot. */
export function priorityAgingMs(plan: Pick<Plan, 'priorityAgingMs'>): number {
  return plan.priorityAgingMs ?? DEFAULT_PRIORITY_AGING_MS;
}

/** The claim rank of a step due at `dueAt`: claims take the lowest first (then due time, run id, plan order). */
export function claimRankAt(dueAt: number, priority: number, agingMs: number): number {
  return priority === 0 ? dueAt : dueAt - Math.round((priority * agingMs) / MAX_PRIORITY);
}

/** The claim rank of the step at `position` of a run, null when it has no due time. */
export function stepClaimRank(plan: Plan, position: number, dueAt: number | null): number | null {
  if (dueAt === null) return null;
  return claimRankAt(dueAt, stepPriority(plan, position), priorityAgingMs(plan));
}

/**
 * The priority a step due since `dueAt` has at `now`: its own, raised by 9 per aging period it has
 * been due (not capped: a step due for two periods ranks before a fresh priority-9 step). Claims
 * ordered by `claimRankAt` are ordered by this, highest first.
 */
export function effectivePriority(priority: number, dueAt: number, now: number, agingMs: number): number {
  return priority + (MAX_PRIORITY * Math.max(0, now - dueAt)) / agingMs;
}
