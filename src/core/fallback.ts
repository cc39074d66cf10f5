import type { FallbackSpec, PlanStep } from './plan/types.js';

/**
 * The step as its fallback runs it: the fallback's executor in place of the step's own, with the
 * step's id, dependencies and retry policy. A fallback has no fallback and no budget of its own;
 * only an agent fallback is held to the step's required outputs and result file (a function or
 * a model returns its own result).
 */
export function fallbackPlanStep(step: PlanStep): PlanStep {
  const fallback = step.fallback;
  if (!fallback) return step;
  const {
    instruction: _instruction,
    fn: _fn,
    args: _args,
    model: _model,
    agent: _agent,
    fallback: _fallback,
    budget: _budget,
    flowKey: _flowKey,
    resultFile,
    resultSchema,
    ...common
  } = step;
  return {
    ...common,
    ...executorFields(fallback),
    requiredOutputs: fallback.kind === 'agent' ? step.requiredOutputs : [],
    ...(fallback.kind === 'agent' && resultFile !== undefined ? { resultFile } : {}),
    ...(fallback.kind === 'agent' && resultSchema !== undefined ? { resultSchema } : {}),
  };
}

/** The step fields of another executor (a fallback, a `compensate:`): its kind and what it runs. */
export function executorFields(
  spec: FallbackSpec,
): Pick<PlanStep, 'kind' | 'instruction' | 'agent' | 'fn' | 'args' | 'model'> {
  return {
    kind: spec.kind,
    ...(spec.instruction === undefined ? {} : { instruction: spec.instruction }),
    ...(spec.agent === undefined ? {} : { agent: spec.agent }),
    ...(spec.fn === undefined ? {} : { fn: spec.fn }),
    ...(spec.args === undefined ? {} : { args: spec.args }),
    ...(spec.model === undefined ? {} : { model: spec.model }),
  };
}
