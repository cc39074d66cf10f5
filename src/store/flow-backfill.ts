import { flowKeyOf } from '../core/flow.js';
import type { Plan } from '../core/plan/types.js';

/** A step row without a flow key (stored before flow control existed). */
export interface KeylessStep {
  run_id: string;
  step_id: string;
  on_fallback: boolean | number;
}

/**
 * The flow keys of steps stored before flow control existed, computed from their runs' plans as
 * the store computes them when it writes a step (`flowKeyOf`). Run by the migration that adds the
 * column, so that attempts already running count against a limit from the first claim on.
 */
export function backfillFlowKeys(
  steps: readonly KeylessStep[],
  planOf: (runId: string) => Plan | null,
): { run_id: string; step_id: string; flow_key: string }[] {
  const plans = new Map<string, Map<string, Plan['steps'][number]> | null>();
  const keyed: { run_id: string; step_id: string; flow_key: string }[] = [];
  for (const step of steps) {
    let byId = plans.get(step.run_id);
    if (byId === undefined) {
      const plan = planOf(step.run_id);
      byId = plan ? new Map(plan.steps.map((planStep) => [planStep.id, planStep])) : null;
      plans.set(step.run_id, byId);
    }
    const planStep = byId?.get(step.step_id);
    if (planStep) {
      const onFallback = step.on_fallback === true || step.on_fallback === 1;
      keyed.push({ run_id: step.run_id, step_id: step.step_id, flow_key: flowKeyOf(planStep, onFallback) });
    }
  }
  return keyed;
}
