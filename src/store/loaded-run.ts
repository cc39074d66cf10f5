import type { RandomSource } from '../core/backoff.js';
import { addUsage } from '../core/budget.js';
import type { StepOutcome } from '../core/failure.js';
import { fallbackPlanStep } from '../core/fallback.js';
import { stepReads } from '../core/plan/template.js';
import type { PlanStep } from '../core/plan/types.js';
import { planIndex, type RunState, type StepResult, stepOf, stepTally } from '../core/run-state.js';
import { completeStep, holdsLease, releaseCancelledLease, type Transition } from '../core/transitions.js';
import type { Completion } from './store.js';

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

/** The stored result of a succeeded attempt (what templates and later steps read). */
export function resultOf(outcome: Extract<StepOutcome, { ok: true }>): StepResult {
  return {
    summary: outcome.summary,
    outputs: outcome.outputs,
    ...(outcome.value === undefined ? {} : { value: outcome.value }),
    ...(outcome.resultRef === undefined ? {} : { ref: outcome.resultRef }),
  };
}

/**
 * Whether the store must look up if this report's tokens were recorded already: a report that will
 * be discarded and carries usage may be one sent again after a commit whose acknowledgement was lost.
 */
export function mayRepeatUsage(run: RunState, completion: Completion): boolean {
  const { stepId, attempt, owner, outcome } = completion;
  return outcome.usage !== undefined && !holdsLease(run, stepId, attempt, owner);
}

/**
 * Whether a report cannot be of this run but is of an earlier run under the same id (deleted by
 * gc while the attempt ran, then created again). Within one run a step's attempts are numbered up
 * from 1, so a report of a step the plan lacks or of an attempt not claimed yet is foreign; a
 * report its lease holder sends never is; and one that would be discarded is foreign when its
 * attempt started before this run was created (its worker's clock, so only where that decides
 * nothing a live report needs). A foreign report settles and records nothing: its attempt row
 * would take the place of this run's own, its tokens would count against a run that did not
 * spend them.
 */
export function isForeignReport(run: RunState, completion: Completion): boolean {
  const { stepId, attempt, owner } = completion;
  const step = stepOf(run, stepId);
  if (!step || attempt > step.attempt) return true;
  if (holdsLease(run, stepId, attempt, owner)) return false;
  return completion.startedAt < run.createdAt;
}

/** An attempt row stored already, as the lookup of a report that may repeat one reads it. */
export interface StoredAttempt {
  owner: string | null;
  /** Its tokens are recorded already. */
  hasUsage: boolean;
}

/** What a report's stored attempt row says of it: see storedAttemptSays. */
export type StoredAttemptVerdict = 'none' | 'usage' | 'foreign';

/**
 * What the stored row of a report's attempt says of it (see mayRepeatUsage): `usage` when it is
 * the same report again and its tokens are counted; `foreign` when another owner's attempt has
 * that row, which within one run never happens (an attempt is claimed once, and a reclaim writes
 * the claimer's row), so the report is of an earlier run under the same id; else `none`.
 */
export function storedAttemptSays(
  completion: Completion,
  row: StoredAttempt | undefined,
): StoredAttemptVerdict {
  if (!row) return 'none';
  if (row.owner !== null && row.owner !== completion.owner) return 'foreign';
  return row.hasUsage ? 'usage' : 'none';
}

/**
 * What a reported attempt does to its run, for both stores' cycles: `live` when its worker still
 * holds the lease (the step completes); otherwise the outcome is discarded, a cancelled step's
 * lease is freed, and the tokens it spent count against the run all the same (unless
 * `usageRecorded`: its attempt row holds them already), so the claims of the same cycle see them.
 * `transition` is null when the run held in memory does not change.
 */
export function settleCompletion(
  run: RunState,
  completion: Completion,
  now: number,
  random: RandomSource,
  usageRecorded = false,
): { live: boolean; transition: Transition | null } {
  const { stepId, attempt, owner, outcome } = completion;
  if (holdsLease(run, stepId, attempt, owner)) {
    const resultJson = outcome.ok ? JSON.stringify(resultOf(outcome)) : null;
    return { live: true, transition: completeStep(run, stepId, outcome, now, random, resultJson) };
  }
  const release = releaseCancelledLease(run, stepId, attempt, owner, now);
  if (!outcome.usage || usageRecorded) return { live: false, transition: release };
  const base = release ?? { run, changedSteps: [], events: [] };
  const position = planIndex(base.run.plan).position.get(stepId);
  if (position === undefined) return { live: false, transition: release };
  // Spent on this step: they count against its own budget too, at its next claim or outcome.
  const steps = [...base.run.steps];
  steps[position] = { ...steps[position]!, usage: addUsage(steps[position]!.usage, outcome.usage) };
  const changedSteps = base.changedSteps.includes(stepId)
    ? base.changedSteps
    : [...base.changedSteps, stepId];
  return {
    live: false,
    transition: {
      ...base,
      changedSteps,
      run: { ...base.run, steps, usage: addUsage(base.run.usage, outcome.usage) },
    },
  };
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
