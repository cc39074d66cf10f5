import { withinCheckHorizon } from './check-horizon.js';
import { deepFreeze } from './deep-freeze.js';
import { fallbackPlanStep } from './fallback.js';
import { itemAdmitted } from './for-each.js';
import { stepReads } from './plan/template.js';
import type { PlanStep } from './plan/types.js';
import {
  isDueStep,
  type RunState,
  type StepResult,
  type StepState,
  stepOf,
  stepTally,
  stoppingLease,
} from './run-state.js';

/** What every claim decision reads of the claiming process and its request. */
interface ClaimScope {
  now: number;
  /** Claims are for this run only (a process driving one run); undefined: any run. */
  runId?: string;
  /** Function steps this process can run; undefined: all. Others are left for a process that can. */
  functions?: readonly string[];
  /** A check's start: work a timer made due after it is left for the next check (core/check-horizon.ts). */
  dueBy?: number;
}

/**
 * Flow control's answer for the step at `position` (its flow key has a free slot): the limits are
 * rows only the dialect can lock, so they come in as a callback, asked last.
 */
export type FlowAdmits = (run: RunState, position: number) => boolean;

/** Steps of the run holding a lease now: per-run concurrency counts them. */
export function runningCount(run: RunState): number {
  return stepTally(run.steps).running;
}

/** Whether any step of `run` may be claimed now: it is running, in scope and below its concurrency. */
export function runTakesClaims(run: RunState, scope: ClaimScope): boolean {
  return (
    run.status === 'running' &&
    (scope.runId === undefined || run.id === scope.runId) &&
    runningCount(run) < run.plan.limits.concurrency
  );
}

/**
 * The one claim predicate, for both stores: what the step at `position` runs if claimed now, or null
 * when it may not be claimed: its run does not take claims (runTakesClaims), it is not due (or, for a
 * check, past its horizon: withinCheckHorizon), it is a function this process lacks, or flow control
 * (`admits`, when given) holds it back. A step that
 * passes may still not start: claimStep checks the budgets.
 */
export function claimableStep(
  run: RunState,
  position: number,
  scope: ClaimScope,
  admits?: FlowAdmits,
): PlanStep | null {
  const step = run.steps[position];
  // A wait step is never claimed: it waits without a lease (core/waits.ts).
  if (!step || run.plan.steps[position]?.kind === 'wait') return null;
  if (!isDueStep(step, scope.now) || !withinCheckHorizon(step, scope.dueBy) || !runTakesClaims(run, scope))
    return null;
  // An attempt a rerun stopped still holds its lease: the next one waits until it reported (or expired).
  if (stoppingLease(step, scope.now)) return null;
  const planStep = stepToRun(run, position, scope.functions);
  if (!planStep || !itemAdmitted(run, position) || (admits && !admits(run, position))) return null;
  return planStep;
}

/**
 * What the step at `position` runs next (its own executor, or its fallback once that took over),
 * or null when it is a function the claiming process lacks (`functions` undefined: it has all).
 */
function stepToRun(run: RunState, position: number, functions?: readonly string[]): PlanStep | null {
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
    const state = stepOf(run, stepId);
    if (!state?.resultJson) continue;
    results[stepId] = step.forEachItem ? sharedResult(state) : (JSON.parse(state.resultJson) as StepResult);
  }
  return results;
}

/**
 * The items of a fan-out read the same results (their group's dependencies, often the very list
 * they came from): parsed once per step state and frozen, not once per item; 10,000 items each
 * parsing a 10,000-element list would cost more than running them.
 */
const sharedResults = new WeakMap<StepState, StepResult>();

function sharedResult(state: StepState): StepResult {
  let result = sharedResults.get(state);
  if (!result) {
    result = deepFreeze(JSON.parse(state.resultJson!) as StepResult);
    sharedResults.set(state, result);
  }
  return result;
}
