import { compensationId } from '../cleanup.js';
import {
  checkDependsOn,
  findCycles,
  type GraphStep,
  type StepPathOf,
  type SuggestionBudget,
} from './graph.js';
import type { PlanIssue } from './issues.js';
import { checkPlanTemplates } from './plan-templates.js';
import { DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, type PlanStep } from './types.js';

/**
 * Checks of the cleanup a plan declares (core/cleanup.ts): `compensate:` on steps and the plan's
 * `finally:` steps. A finally step runs once, after the run ended: it depends only on other finally
 * steps, and its templates may read any step's result (`{{steps.<id>.summary}}`: empty for a step
 * without one) and `{{run.status}}`. A compensation may read the step it undoes, that step's
 * dependencies, a fan-out's `{{item}}`, and `{{run.status}}`.
 */
export function checkCleanup(
  steps: readonly PlanStep[],
  finallySteps: readonly PlanStep[],
  inputNames: readonly string[],
  paths: { stepPathOf: StepPathOf; finallyPathOf: StepPathOf },
  budget: SuggestionBudget,
): PlanIssue[] {
  const { stepPathOf, finallyPathOf } = paths;
  const issues: PlanIssue[] = [];
  steps.forEach((step, index) => {
    if (step.compensate !== undefined && step.kind === 'wait') {
      issues.push({
        path: stepPathOf(index, 'compensate'),
        problem: 'a wait step does nothing to undo: remove "compensate"',
      });
    }
  });
  const mainIds = new Map(steps.map((step, index) => [step.id, index]));
  const finallyIds = new Set(finallySteps.map((step) => step.id));
  finallySteps.forEach((step, index) => {
    for (const field of ['forEach', 'wait', 'compensate', 'when'] as const) {
      if (step[field] === undefined) continue;
      issues.push({
        path: finallyPathOf(index, field),
        problem: `a finally step runs once, after the run ended, whatever its status: remove "${field}"${field === 'when' ? ' (a function step can read run.status and decide)' : ''}`,
      });
    }
    const main = mainIds.get(step.id);
    if (main !== undefined) {
      issues.push({
        path: finallyPathOf(index, 'id'),
        problem: `duplicate step id "${step.id}" (already used by ${stepPathOf(main)}): step ids must be unique`,
      });
    }
    step.dependsOn.forEach((dep, depIndex) => {
      if (!finallyIds.has(dep) && mainIds.has(dep)) {
        issues.push({
          path: finallyPathOf(index, 'dependsOn', depIndex),
          problem: `"${dep}" is a step of the plan: finally steps run after every step ended, and depend only on other finally steps`,
        });
      }
    });
  });
  issues.push(
    ...checkDependsOn(
      finallySteps.map((step) => ({ ...step, dependsOn: step.dependsOn.filter((dep) => !mainIds.has(dep)) })),
      finallyPathOf,
      budget,
    ),
  );
  for (const cycle of findCycles(finallySteps)) {
    const at = finallySteps.findIndex((step) => step.id === cycle[0]);
    issues.push({
      path: finallyPathOf(at, 'dependsOn'),
      problem: `finally steps depend on each other in a cycle: ${[...cycle, cycle[0]].join(' -> ')}`,
    });
  }
  issues.push(...checkCleanupTemplates(steps, finallySteps, inputNames, paths, budget));
  return issues;
}

/** Stands for "every step of the plan" in the graph the cleanup templates are checked against. */
const END = '(end)';

function checkCleanupTemplates(
  steps: readonly PlanStep[],
  finallySteps: readonly PlanStep[],
  inputNames: readonly string[],
  paths: { stepPathOf: StepPathOf; finallyPathOf: StepPathOf },
  budget: SuggestionBudget,
): PlanIssue[] {
  // A compensation's texts as those of a step depending on the step it undoes; a finally step's as
  // those of a step depending on every step (through END) and on its own dependencies.
  const checked: PlanStep[] = [];
  const pathOf: ((...fields: (string | number)[]) => string)[] = [];
  steps.forEach((step, index) => {
    const body = step.compensate;
    if (body === undefined) return;
    checked.push({
      ...step,
      id: compensationId(step.id),
      dependsOn: [step.id],
      ...(body.instruction === undefined ? { instruction: undefined } : { instruction: body.instruction }),
      ...(body.model === undefined ? { model: undefined } : { model: body.model }),
      fallback: undefined,
      wait: undefined,
    });
    pathOf.push((...fields) => paths.stepPathOf(index, 'compensate', ...fields));
  });
  finallySteps.forEach((step, index) => {
    checked.push({ ...step, dependsOn: [...step.dependsOn, END] });
    pathOf.push((...fields) => paths.finallyPathOf(index, ...fields));
  });
  if (checked.length === 0) return [];
  const graph: GraphStep[] = [...steps, { id: END, dependsOn: steps.map((step) => step.id) }, ...checked];
  return checkPlanTemplates(
    checked,
    graph,
    inputNames,
    (index, ...fields) => pathOf[index]!(...fields),
    budget,
    { cleanup: true },
  );
}

/** `output:`: a template over any step's result (they all succeeded when it is rendered) and the inputs. */
export function checkOutput(
  output: string,
  steps: readonly PlanStep[],
  inputNames: readonly string[],
  budget: SuggestionBudget,
): PlanIssue[] {
  // Checked as the instruction of a step after every step.
  const pseudo: PlanStep = {
    id: '(output)',
    title: 'output',
    kind: 'agent',
    instruction: output,
    dependsOn: [END],
    requiredOutputs: [],
    sideEffect: 'none',
    retry: DEFAULT_RETRY,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    delayBeforeMs: 0,
  };
  const graph: GraphStep[] = [...steps, { id: END, dependsOn: steps.map((s) => s.id) }, pseudo];
  return checkPlanTemplates([pseudo], graph, inputNames, () => 'output', budget);
}
