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
  return NOT_FOR_SUB_PLANS.filter((field) => step[field] !== undefined).map((field) => ({
    path: `${path}.${field}`,
    problem: `a sub-plan step runs its child plan's steps, which set their own ${field}: remove "${field}" here`,
  }));
}
