import { stepClaimRank } from './priority.js';
import { isDueStep, type RunState } from './run-state.js';

/** A due step as a claim looks at it: where it is, when it became due and its claim rank. */
export interface DueStep {
  runId: string;
  stepId: string;
  dueAt: number;
  /** Its due time moved earlier by its priority (core/priority.ts claimRankAt); equal to dueAt at priority 0. */
  rank: number;
  /** Its index in the run's plan (`steps.position` in both stores). */
  position: number;
}

/**
 * The one order in which due steps are offered to claims, on both stores: lowest claim rank first
 * (higher priority first, aged by the time a step has been due: core/priority.ts), then earliest
 * due, then by run id, then in plan order, so the steps of one plan declared side by side start in
 * the order they are written (never by step id, which would make `zeta` wait for `alpha`). SQLite's
 * SQL orders by the same columns: `(claim_rank, due_at, run_id, position)`.
 */
export function compareDueSteps(a: DueStep, b: DueStep): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  if (a.dueAt !== b.dueAt) return a.dueAt - b.dueAt;
  if (a.runId !== b.runId) return a.runId < b.runId ? -1 : 1;
  return a.position - b.position;
}

/** The due step at `position` of a run, as a claim orders it. */
export function dueStepOf(run: RunState, position: number): DueStep {
  const step = run.steps[position]!;
  const dueAt = step.dueAt!;
  return {
    runId: run.id,
    stepId: step.stepId,
    dueAt,
    rank: stepClaimRank(run.plan, position, dueAt)!,
    position,
  };
}

/** The due steps of a run held in memory, pushed onto `into` in plan order (sort them with compareDueSteps). */
export function pushDueSteps(run: RunState, now: number, into: DueStep[]): DueStep[] {
  const { steps } = run;
  for (let position = 0; position < steps.length; position++) {
    if (isDueStep(steps[position]!, now)) into.push(dueStepOf(run, position));
  }
  return into;
}
