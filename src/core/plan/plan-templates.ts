import { checkListedRefs, type TemplateRefContext } from './check-templates.js';
import {
  answerDependencyQuestions,
  type GraphStep,
  type StepPathOf,
  type SuggestionBudget,
} from './graph.js';
import type { PlanIssue } from './issues.js';
import { listTemplateRefs } from './template.js';
import type { PlanStep } from './types.js';

type TemplateRefs = ReturnType<typeof listTemplateRefs>;

/** The texts of a step that hold templates, each with its field path and its references. */
function templateTexts(step: PlanStep): { refs: TemplateRefs; fields: string[] }[] {
  const texts: { text: string; fields: string[] }[] = [];
  if (step.instruction !== undefined) texts.push({ text: step.instruction, fields: ['instruction'] });
  if (step.fallback?.instruction !== undefined) {
    texts.push({ text: step.fallback.instruction, fields: ['fallback', 'instruction'] });
  }
  if (step.fallback?.model !== undefined) {
    texts.push({ text: step.fallback.model.prompt, fields: ['fallback', 'model', 'prompt'] });
  }
  if (step.wait?.prompt !== undefined) texts.push({ text: step.wait.prompt, fields: ['wait', 'prompt'] });
  for (const [name, value] of Object.entries(step.subPlan?.inputs ?? {}))
    texts.push({ text: value, fields: ['plan', 'inputs', name] });
  if (step.wait?.event !== undefined) texts.push({ text: step.wait.event, fields: ['wait', 'event'] });
  if (step.notBefore !== undefined) texts.push({ text: step.notBefore, fields: ['notBefore'] });
  if (step.flow !== undefined) texts.push({ text: step.flow.key, fields: ['flow', 'key'] });
  if (step.model !== undefined) {
    texts.push({ text: step.model.prompt, fields: ['model', 'prompt'] });
    if (step.model.system !== undefined) texts.push({ text: step.model.system, fields: ['model', 'system'] });
  }
  // A fan-out's `{{<as>}}` is filled in by its expansion (core/for-each.ts), not by these rules.
  const itemName = step.forEach?.as;
  return texts
    .filter(({ text }) => text.includes('{{'))
    .map(({ text, fields }) => ({
      refs: listTemplateRefs(text).filter(({ path }) => itemName === undefined || path[0] !== itemName),
      fields,
    }));
}

/**
 * Checks the template references of every step. Whether a step depends on the steps its
 * templates name is asked of the graph once, for all of them together (see
 * answerDependencyQuestions), so the check stays near linear in the size of the plan.
 */
export function checkPlanTemplates(
  steps: readonly PlanStep[],
  graph: readonly GraphStep[],
  inputNames: readonly string[],
  pathOf: StepPathOf,
  budget: SuggestionBudget,
  options: { cleanup?: boolean } = {},
): PlanIssue[] {
  const allStepIds = graph.map((step) => step.id);
  const stepIdSet = new Set(allStepIds);
  const texts = steps.map(templateTexts);
  // The indirect dependencies to ask about: named steps that exist and are not direct ones.
  const questions: { step: string; target: string }[] = [];
  const named = steps.map((step, index) => {
    const direct = new Set(step.dependsOn);
    const indirect = new Set<string>();
    for (const { refs } of texts[index]!) {
      for (const { path } of refs) {
        // Every `{{steps.<id>...}}`, well-formed or not: the suggestions may name the latter's id.
        const id = path[0] === 'steps' ? path[1] : undefined;
        if (id !== undefined && id !== step.id && stepIdSet.has(id) && !direct.has(id)) indirect.add(id);
      }
    }
    for (const target of indirect) questions.push({ step: step.id, target });
    return { direct, indirect };
  });
  const answers = answerDependencyQuestions(graph, questions);
  const ancestors = new Map<string, Set<string>>();
  questions.forEach((question, q) => {
    if (!answers[q]) return;
    const found = ancestors.get(question.step) ?? new Set<string>();
    found.add(question.target);
    ancestors.set(question.step, found);
  });
  const inputNameSet = new Set(inputNames);
  const resultSchemas = new Map<string, Record<string, unknown>>();
  for (const step of steps) {
    if (step.resultSchema !== undefined && !resultSchemas.has(step.id))
      resultSchemas.set(step.id, step.resultSchema);
  }
  const issues: PlanIssue[] = [];
  steps.forEach((step, index) => {
    if (texts[index]!.length === 0) return;
    const { direct } = named[index]!;
    const indirect = ancestors.get(step.id) ?? new Set<string>();
    const context: TemplateRefContext = {
      stepId: step.id,
      dependsOn: (target) => direct.has(target) || indirect.has(target),
      suggestible: [...step.dependsOn, ...indirect],
      allStepIds,
      stepIdSet,
      inputNames,
      inputNameSet,
      budget,
      resultSchemaOf: (target) => resultSchemas.get(target),
      ...(options.cleanup === true ? { cleanup: true } : {}),
    };
    for (const { refs, fields } of texts[index]!) {
      issues.push(...checkListedRefs(refs, () => pathOf(index, ...fields), context));
    }
  });
  return issues;
}
