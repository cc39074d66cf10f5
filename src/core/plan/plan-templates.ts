import { checkTemplateRefs, stepIdsNamedIn, type TemplateRefContext } from './check-templates.js';
import {
  answerDependencyQuestions,
  type GraphStep,
  type StepPathOf,
  type SuggestionBudget,
} from './graph.js';
import type { PlanIssue } from './issues.js';
import type { PlanStep } from './types.js';

/** The texts of a step that may hold templates, each with its field path. */
function templateTexts(step: PlanStep): { text: string; fields: string[] }[] {
  const texts: { text: string; fields: string[] }[] = [];
  if (step.instruction !== undefined) texts.push({ text: step.instruction, fields: ['instruction'] });
  if (step.fallback?.instruction !== undefined) {
    texts.push({ text: step.fallback.instruction, fields: ['fallback', 'instruction'] });
  }
  if (step.fallback?.model !== undefined) {
    texts.push({ text: step.fallback.model.prompt, fields: ['fallback', 'model', 'prompt'] });
  }
  if (step.model !== undefined) {
    texts.push({ text: step.model.prompt, fields: ['model', 'prompt'] });
    if (step.model.system !== undefined) texts.push({ text: step.model.system, fields: ['model', 'system'] });
  }
  return texts;
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
): PlanIssue[] {
  const allStepIds = graph.map((step) => step.id);
  const stepIdSet = new Set(allStepIds);
  const texts = steps.map(templateTexts);
  // The indirect dependencies to ask about: named steps that exist and are not direct ones.
  const questions: { step: string; target: string }[] = [];
  const named = steps.map((step, index) => {
    const direct = new Set(step.dependsOn);
    const indirect = new Set<string>();
    for (const { text } of texts[index]!) {
      for (const id of stepIdsNamedIn(text)) {
        if (id !== step.id && stepIdSet.has(id) && !direct.has(id)) indirect.add(id);
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
    };
    for (const { text, fields } of texts[index]!) {
      issues.push(...checkTemplateRefs(text, pathOf(index, ...fields), context));
    }
  });
  return issues;
}
