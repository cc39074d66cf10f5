import type { PlanIssue } from './issues.js';
import type { PlanFileStep } from './schema.js';

/** What a sub-plan step (`plan:`) cannot have: its child run's steps run the work, with their own settings. */
const NOT_FOR_SUB_PLANS = [
  'agent',
  'args',
  'fallback',
  'verify',
  'resultFile',
  'resultSchema',
  'requiredOutputs',
  'heartbeatTimeoutMs',
  'sandbox',
  'checkpoint',
  'compensate',
] as const;

/** The fields of a `plan:` step that belong to the steps of its child plan instead. */
export function subPlanStepProblems(step: PlanFileStep, path: string): PlanIssue[] {
  const problems = NOT_FOR_SUB_PLANS.filter((field) => step[field] !== undefined).map((field) => ({
    path: `${path}.${field}`,
    problem: `a sub-plan step runs its child plan's steps, which set their own ${field}: remove "${field}" here`,
  }));
  const named = [step.plan?.path, step.plan?.name].filter((given) => given !== undefined).length;
  if (named !== 1)
    problems.push({
      path: `${path}.plan`,
      problem:
        named === 0
          ? 'name the child plan: path: ./fix-repo.yaml (a file) or name: fix-repo (a plan Baton already knows)'
          : 'give path or name, not both',
    });
  return problems;
}
