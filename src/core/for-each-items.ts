import type { Draft } from './draft.js';
import { itemText } from './plan/template.js';
import type { PlanStep } from './plan/types.js';
import { stepOf } from './run-state.js';
import { conditionResult } from './when-condition.js';
import { evaluateExpression, firstLineOf } from './when-language.js';

/**
 * A fan-out's items as its expansion makes them (see for-each.ts): the list `forEach.items` gives,
 * and one item step per element, its `{{<as>}}` templates filled in.
 */

/** The id of item `index` of group `groupId`. */
export function itemStepId(groupId: string, index: number): string {
  return `${groupId}[${index}]`;
}

/** The list `forEach.items` gives, over the same variables as a `when`, its values made JSON. */
export function evaluateItems(draft: Draft, group: PlanStep): { items: unknown[] } | { invalid: string } {
  const expression = group.forEach!.items;
  const steps: Record<string, { result: unknown; status: string }> = {};
  for (const dep of group.dependsOn) {
    const state = stepOf(draft.run, dep);
    if (!state) continue;
    const result = conditionResult(state);
    if ('tooLarge' in result) {
      return {
        invalid: `forEach.items ${expression}: the result of step "${dep}" (${result.tooLarge} bytes) is kept as an artifact, too large to expand over: have "${dep}" return a smaller list`,
      };
    }
    steps[dep] = { result: result.value, status: state.status };
  }
  let value: unknown;
  try {
    value = evaluateExpression(expression, { inputs: draft.run.inputs ?? {}, steps });
  } catch (error) {
    return { invalid: `forEach.items ${expression}: ${firstLineOf(error)}` };
  }
  if (!Array.isArray(value)) {
    return { invalid: `forEach.items ${expression}: gave ${typeof value}, not a list` };
  }
  return { items: value.map(toJson) };
}

/** A CEL value as JSON: ints are bigints, map literals Maps. */
function toJson(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(toJson);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), toJson(v)]));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v)]));
  }
  return value;
}

/**
 * Item `index` of the group: the group's step without forEach or when. Its paths (`resultFile`,
 * `requiredOutputs`) get their `{{<as>}}` filled in now; its texts (instruction, model prompt and
 * system, fallback instruction) keep them, filled when the step runs in the same single pass as
 * every other reference (core/plan/template.ts), so an item's own text is never read as a template.
 * A reference the item cannot fill is the problem returned instead, for every field.
 */
export function itemStep(group: PlanStep, index: number, value: unknown): PlanStep | string {
  // The group's notBefore held the group back; its items are due when it expands.
  const { forEach, when: _when, notBefore: _notBefore, ...rest } = group;
  const name = forEach!.as;
  let problem: string | undefined;
  const fill = (text: string): string =>
    text.replace(/\{\{\s*([^{}]*?)\s*\}\}/g, (raw, inner: string) => {
      const [head, ...path] = inner.split('.');
      if (head !== name) return raw;
      const found = itemText(value, path);
      if (found === undefined) {
        problem ??= `item ${index} has no ${path.join('.')} for ${raw} (item: ${JSON.stringify(value).slice(0, 100)}): fix steps.${group.id}.forEach.items or the template`;
        return raw;
      }
      return found;
    });
  const texts = [rest.instruction, rest.model?.prompt, rest.model?.system, rest.fallback?.instruction];
  for (const text of texts) if (text !== undefined) fill(text);
  const step: PlanStep = {
    ...rest,
    id: itemStepId(group.id, index),
    title: `${group.title}[${index}]`,
    ...(rest.resultFile === undefined ? {} : { resultFile: fill(rest.resultFile) }),
    // Each item counts against the key rendered for it ("customer:{{item.customer}}").
    ...(rest.flow === undefined ? {} : { flow: { ...rest.flow, key: fill(rest.flow.key) } }),
    requiredOutputs: rest.requiredOutputs.map(fill),
    delayBeforeMs: 0,
    forEachItem: { group: group.id, index, value, as: name },
  };
  return problem ?? step;
}
