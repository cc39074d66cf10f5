import { planStep } from './draft.js';
import { BatonError } from './errors.js';
import type { Plan } from './plan/types.js';
import { descendantPositions } from './rerun.js';
import { type RunState, SATISFIED_STEP_STATUSES, type StepStatus, stepOf } from './run-state.js';

/**
 * `baton fork <run> --from <step>`: a new run that keeps the results of the steps that do not
 * depend on `<step>` (copied from the old run: status and result, whose artifacts are shared by
 * reference) and runs the rest, of the old plan or an edited one. The pure decisions live here;
 * runtime/fork-run.ts reads the old run, prepares the new one and its workspace, and stores it.
 */

/** A step the fork keeps: it starts settled, with the old run's result. */
export interface KeptStep {
  stepId: string;
  status: Extract<StepStatus, 'succeeded' | 'skipped' | 'degraded'>;
  resultJson: string | null;
}

/**
 * The plan a run was declared with: its snapshot without the item steps its fan-outs expanded into
 * (a fork expands them afresh), the cleanup steps it ran when it ended, and the marks of an earlier
 * fork and of its ending.
 */
export function declaredPlan(plan: Plan): Plan {
  const { forkedFrom: _forkedFrom, closing: _closing, ...rest } = plan;
  return {
    ...rest,
    steps: plan.steps.filter((step) => step.forEachItem === undefined && step.cleanup === undefined),
  };
}

/** The step a fork starts again from: an item of a fan-out stands for its group, which expands afresh. */
export function forkPoint(plan: Plan, from: string): string {
  return planStep(plan, from).forEachItem?.group ?? from;
}

/**
 * What the fork of `old` from `from` keeps, with `plan` (normalised as it will be stored) as the
 * new run's plan: every step of `plan` that neither is `from` nor depends on it (in `plan`), and
 * that was settled in `old`. Refuses (naming the step) a kept step whose definition `plan`
 * changed: its result would not be the result of the step as written. `where` names the plan file.
 */
export function forkKeptSteps(
  old: Pick<RunState, 'id' | 'plan' | 'steps'>,
  plan: Plan,
  from: string,
  where: string,
): KeptStep[] {
  const point = forkPoint(old.plan, from);
  if (!plan.steps.some((step) => step.id === point)) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: has no step "${point}" to fork from (run ${old.id} has it): fork from a step both plans have`,
    );
  }
  const rerun = descendantPositions(plan, [point]);
  const kept: KeptStep[] = [];
  for (const [position, step] of plan.steps.entries()) {
    if (step.id === point || rerun.has(position)) continue;
    const state = stepOf(old, step.id);
    if (!state || !SATISFIED_STEP_STATUSES.has(state.status)) continue;
    const before = planStep(old.plan, step.id);
    if (JSON.stringify(before) !== JSON.stringify(step)) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${where}: steps.${step.id} changed, but the fork keeps its result from run ${old.id} (it does not depend on ${point}): leave steps.${step.id} as it was, or fork from it: baton fork ${old.id} --from ${step.id}`,
      );
    }
    kept.push({
      stepId: step.id,
      status: state.status as KeptStep['status'],
      resultJson: state.resultJson,
    });
  }
  return kept;
}
