import { unknownStepProblem } from './graph.js';
import { closestMatch, type PlanIssue } from './issues.js';
import { ALLOWED_TEMPLATE_FORMS, listTemplateRefs, parseTemplateRef } from './template.js';

/** Checks every `{{...}}` of a step's text against what will exist when the step runs. */
export function checkTemplateRefs(
  text: string,
  path: string,
  context: {
    stepId: string;
    /** Every step the step depends on, directly or indirectly. */
    dependencies: ReadonlySet<string>;
    allStepIds: readonly string[];
    inputNames: readonly string[];
  },
): PlanIssue[] {
  const { stepId, dependencies, allStepIds, inputNames } = context;
  const issues: PlanIssue[] = [];
  for (const { raw, path: refPath } of listTemplateRefs(text)) {
    const ref = parseTemplateRef(refPath);
    if (ref === undefined) {
      const valid = [
        ...inputNames.map((name) => `inputs.${name}`),
        ...[...dependencies].flatMap((id) => [`steps.${id}.summary`, `steps.${id}.outputs`]),
        'run.workspace',
        'run.id',
      ];
      const match = closestMatch(refPath.join('.'), valid);
      const hint = match === undefined ? '' : ` (did you mean "{{${match}}}"?)`;
      issues.push({
        path,
        problem: `${raw} is not a template reference${hint}; allowed: ${ALLOWED_TEMPLATE_FORMS}`,
      });
    } else if (ref.kind === 'input' && !inputNames.includes(ref.name)) {
      issues.push({ path, problem: `${raw}: ${undeclaredInputProblem(ref.name, inputNames)}` });
    } else if (ref.kind === 'step') {
      const problem = stepRefProblem(ref.stepId, stepId, dependencies, allStepIds);
      if (problem !== undefined) issues.push({ path, problem: `${raw}: ${problem}` });
    }
  }
  return issues;
}

function undeclaredInputProblem(name: string, declared: readonly string[]): string {
  if (declared.length === 0) return `input "${name}" is not declared: add it under inputs:`;
  const match = closestMatch(name, declared);
  const fix = match === undefined ? 'declare it under inputs:' : `did you mean "${match}"?`;
  return `input "${name}" is not declared (declared: ${declared.join(', ')}): ${fix}`;
}

function stepRefProblem(
  target: string,
  stepId: string,
  dependencies: ReadonlySet<string>,
  allStepIds: readonly string[],
): string | undefined {
  if (target === stepId) return `a step cannot use its own result`;
  if (!allStepIds.includes(target)) return unknownStepProblem(target, allStepIds);
  if (dependencies.has(target)) return undefined;
  return `step "${target}" is not a dependency of "${stepId}" (directly or indirectly), so it may not have run yet: add "${target}" to steps.${stepId}.dependsOn`;
}
