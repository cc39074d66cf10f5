import { type SuggestionBudget, unknownStepProblem } from './graph.js';
import { closestMatch, type PlanIssue } from './issues.js';
import { resultSchemaPathProblem } from './result-schema-path.js';
import { ALLOWED_TEMPLATE_FORMS, parseTemplateRef } from './template.js';

/** What a step's templates may use, as `checkListedRefs` needs it. */
export interface TemplateRefContext {
  stepId: string;
  /** Whether the step depends on `target`, directly or indirectly. */
  dependsOn(target: string): boolean;
  /** Dependencies a suggestion may name: the direct ones and those its templates mention. */
  suggestible: readonly string[];
  allStepIds: readonly string[];
  stepIdSet: ReadonlySet<string>;
  inputNames: readonly string[];
  inputNameSet: ReadonlySet<string>;
  budget: SuggestionBudget;
  /** The `resultSchema` of a step, if it has one: result paths are checked against it. */
  resultSchemaOf?: (stepId: string) => Record<string, unknown> | undefined;
  /** A cleanup step's texts (`compensate:`, `finally:`): `{{run.status}}` is known. */
  cleanup?: boolean;
}

/** The same for references already listed; `pathOf` is called only for a problem. */
export function checkListedRefs(
  refs: readonly { raw: string; path: string[] }[],
  pathOf: () => string,
  context: TemplateRefContext,
): PlanIssue[] {
  const { stepId, inputNames } = context;
  const issues: PlanIssue[] = [];
  for (const { raw, path: refPath } of refs) {
    let cached: string | undefined;
    const path = () => (cached ??= pathOf());
    const ref = parseTemplateRef(refPath);
    if (ref === undefined) {
      const valid = [
        ...inputNames.map((name) => `inputs.${name}`),
        ...context.suggestible.flatMap((id) => [
          `steps.${id}.summary`,
          `steps.${id}.outputs`,
          `steps.${id}.result`,
        ]),
        'run.workspace',
        'run.id',
      ];
      const match = context.budget.take() ? closestMatch(refPath.join('.'), valid) : undefined;
      const hint = match === undefined ? '' : ` (did you mean "{{${match}}}"?)`;
      issues.push({
        path: path(),
        problem: `${raw} is not a template reference${hint}; allowed: ${ALLOWED_TEMPLATE_FORMS}`,
      });
    } else if (ref.kind === 'run' && ref.field === 'status' && context.cleanup !== true) {
      issues.push({
        path: path(),
        problem: `${raw} is known only once the run ended: use it in finally: steps and compensate:`,
      });
    } else if (ref.kind === 'input' && !context.inputNameSet.has(ref.name)) {
      issues.push({ path: path(), problem: `${raw}: ${undeclaredInputProblem(ref.name, inputNames)}` });
    } else if (ref.kind === 'step' || ref.kind === 'result') {
      const schema = ref.kind === 'result' ? context.resultSchemaOf?.(ref.stepId) : undefined;
      const problem =
        stepRefProblem(ref.stepId, stepId, context) ??
        (schema === undefined || ref.kind !== 'result'
          ? undefined
          : resultSchemaPathProblem(ref.stepId, schema, ref.path));
      if (problem !== undefined) issues.push({ path: path(), problem: `${raw}: ${problem}` });
    }
  }
  return issues;
}

function undeclaredInputProblem(name: string, declared: readonly string[]): string {
  if (declared.length === 0) return `input "${name}" is not declared: add it under inputs:`;
  const match = closestMatch(name, declared);
  const fix = match === undefined ? 'declare it under inputs:' : `did you mean "${match}"?`;
  const shown = declared.length > 30 ? [...declared.slice(0, 30), '...'] : declared;
  return `input "${name}" is not declared (declared: ${shown.join(', ')}): ${fix}`;
}

function stepRefProblem(target: string, stepId: string, context: TemplateRefContext): string | undefined {
  if (target === stepId) return `a step cannot use its own result`;
  if (!context.stepIdSet.has(target)) {
    return unknownStepProblem(target, context.allStepIds, context.budget.take());
  }
  if (context.dependsOn(target)) return undefined;
  return `step "${target}" is not a dependency of "${stepId}" (directly or indirectly), so it may not have run yet: add "${target}" to steps.${stepId}.dependsOn`;
}
