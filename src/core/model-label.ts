import { agentProgramName } from './flow.js';
import type { PlanStep } from './plan/types.js';

/**
 * The `model` label of an attempt's usage in `/metrics` (runtime/metrics.ts), from the step it ran
 * (the plan's step, or its fallback once that took over): a model step's `<provider>/<model>`; an
 * agent step's CLI (flow.ts `agentProgramName`: `claude`, `codex`); `fn` for a function. Bounded by
 * the plans.
 */
export function modelLabel(step: PlanStep): string {
  if (step.kind === 'model' && step.model) return `${step.model.provider}/${step.model.model}`;
  if (step.kind === 'agent') return agentProgramName(step);
  return step.kind;
}
