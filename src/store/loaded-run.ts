import { fallbackPlanStep } from '../core/fallback.js';
import { stepReads } from '../core/plan/template.js';
import type { PlanStep } from '../core/plan/types.js';
import { type RunState, type StepResult, stepOf, stepTally } from '../core/run-state.js';

/** A run as every store loads it to apply a transition: its state and what its steps run with. */
export interface LoadedRun {
  state: RunState;
  planHash: string;
  inputs: Record<string, string>;
  workspace: string;
}

/** Steps of the run holding a lease now: per-run concurrency counts them. */
export function runningCount(run: RunState): number {
  return stepTally(run.steps).running;
}

/**
 * What the step at `position` runs next (its own executor, or its fallback once that took over),
 * or null when it is a function the claiming process lacks (`functions` undefined: it has all).
 */
export function stepToRun(run: RunState, position: number, functions?: readonly string[]): PlanStep | null {
  const declared = run.plan.steps[position]!;
  const planStep = run.steps[position]!.onFallback ? fallbackPlanStep(declared) : declared;
  if (planStep.kind === 'fn' && functions && !functions.includes(planStep.fn ?? '')) return null;
  return planStep;
}

/**
 * The results a claimed attempt of `step` reads (see stepReads), from its run as the claiming cycle
 * holds it: what getStepResults would answer, without asking the database again. A recorded result
 * never changes once its step succeeded.
 */
export function claimResults(run: RunState, step: PlanStep): Record<string, StepResult> {
  const results: Record<string, StepResult> = {};
  for (const stepId of stepReads(step)) {
    const json = stepOf(run, stepId)?.resultJson;
    if (json) results[stepId] = JSON.parse(json) as StepResult;
  }
  return results;
}
