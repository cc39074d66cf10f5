import { checkWhen } from '../when-language.js';
import {
  parsedOrProblem,
  patternProblems,
  positioned,
  referenceProblems,
  type WhenContext,
} from './check-when.js';
import type { PlanIssue } from './issues.js';
import type { ForEachSpec } from './types.js';

const EXAMPLE = 'e.g. steps.research.result.pages';
/** Names a template already gives a meaning to: an item may not take them. */
const TAKEN_NAMES = new Set(['inputs', 'steps', 'run']);

/**
 * The problems of a step's `forEach.items`, each with its fix: like a `when`, it must parse and name
 * only declared inputs and the step's own direct dependencies (settled when it is expanded), and it
 * must give a list (or a value whose type is only known when it runs).
 */
export function itemsProblems(expression: string, context: WhenContext): string[] {
  const root = parsedOrProblem(expression, `write a CEL expression giving a list, ${EXAMPLE}`);
  if (typeof root === 'string') return [root];
  const problems = [...referenceProblems(root, context), ...patternProblems(root)];
  if (problems.length > 0) return problems;
  const checked = checkWhen(expression);
  if (!checked.valid) {
    return [
      `${JSON.stringify(expression)}: ${positioned(checked.error)}; items read inputs.<name> and steps.<id>.result, ${EXAMPLE}`,
    ];
  }
  if (checked.type !== 'dyn' && !checked.type?.startsWith('list')) {
    return [`${JSON.stringify(expression)} is of type ${checked.type}, not a list: ${EXAMPLE}`];
  }
  return [];
}

/** The problems of every step's `forEach`, at `steps.<id>.forEach.<field>`. */
export function checkForEachSteps(
  steps: readonly { id: string; dependsOn: readonly string[]; forEach?: ForEachSpec }[],
  inputNames: readonly string[],
  pathOf: (index: number, ...fields: string[]) => string,
): PlanIssue[] {
  const allStepIds = new Set(steps.map((step) => step.id));
  return steps.flatMap((step, index) => {
    const forEach = step.forEach;
    if (forEach === undefined) return [];
    const context = { stepId: step.id, dependsOn: step.dependsOn, allStepIds, inputNames };
    const issues = itemsProblems(forEach.items, context).map((problem) => ({
      path: pathOf(index, 'forEach', 'items'),
      problem,
    }));
    if (TAKEN_NAMES.has(forEach.as)) {
      issues.push({
        path: pathOf(index, 'forEach', 'as'),
        problem: `"${forEach.as}" already names ${forEach.as}.<...> in templates: choose another name, e.g. page`,
      });
    }
    return issues;
  });
}
