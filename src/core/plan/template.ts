import { BatonError } from '../errors.js';
import { isResultPath, resultText } from './template-result.js';
import { STEP_ID_PATTERN as NAME, type PlanStep } from './types.js';

/**
 * `{{...}}` references in step instructions. Plain substitution of a closed set of forms, never
 * evaluation: no expressions, no property walking, and a substituted value is not scanned again.
 */

/** What a template can see when a step's instruction is rendered. */
export interface TemplateContext {
  /** `status`: how the run ended, for a cleanup step (`{{run.status}}`). */
  run: { id: string; workspace: string; status?: string };
  inputs: Record<string, string>;
  /** `value`: the step's structured result (a result file's JSON, a function's return value), if any. */
  steps: Record<string, { summary: string; outputs: string[]; value?: unknown }>;
  /** A fan-out item step's element, under its name (`{{item}}`, `{{item.<field>}}`). */
  item?: { name: string; value: unknown };
  /** A `finally:` step: a step without a result (it never succeeded) reads as empty text. */
  missingStepsEmpty?: boolean;
}

/** A reference in one of the allowed forms. */
type TemplateRef =
  | { kind: 'run'; field: 'id' | 'workspace' | 'status' }
  | { kind: 'input'; name: string }
  | { kind: 'step'; stepId: string; field: 'summary' | 'outputs' }
  | { kind: 'result'; stepId: string; path: string[] };

export const ALLOWED_TEMPLATE_FORMS =
  '{{inputs.<name>}}, {{steps.<id>.summary}}, {{steps.<id>.outputs}}, {{steps.<id>.result}}, {{steps.<id>.result.<path>}}, {{run.workspace}}, {{run.id}}, {{run.status}} (cleanup steps)';

// No braces inside, so `{{{x}}}` finds `{{x}}` and stray braces stay literal text.
const REF_PATTERN = /\{\{([^{}]*)\}\}/g;

/**
 * The text with every `{{...}}` replaced by what `value` gives for it (its raw text and its
 * dot-separated path): the one substitution of every template (a step's, a trigger's inputs).
 */
export function substituteRefs(text: string, value: (raw: string, path: string[]) => string): string {
  // A replacer function's return value is inserted as is: `$&` and friends are not expanded, and
  // nothing it returns is scanned again: a value holding `{{inputs.secret}}` stays that text.
  return text.replace(REF_PATTERN, (raw: string, inner: string) => value(raw, splitRefPath(inner)));
}

/** Every `{{...}}` in the text, in order: the raw text and its dot-separated path (trimmed). */
export function listTemplateRefs(text: string): { raw: string; path: string[] }[] {
  return Array.from(text.matchAll(REF_PATTERN), (match) => ({
    raw: match[0],
    path: splitRefPath(match[1] ?? ''),
  }));
}

/** The reference a path denotes, or undefined when it is not one of the allowed forms. */
export function parseTemplateRef(path: readonly string[]): TemplateRef | undefined {
  const [head, name, field, ...rest] = path;
  if (head === 'steps' && name !== undefined && NAME.test(name) && field === 'result') {
    return isResultPath(rest) ? { kind: 'result', stepId: name, path: rest } : undefined;
  }
  if (rest.length > 0 || head === undefined) return undefined;
  if (head === 'run' && field === undefined && (name === 'id' || name === 'workspace' || name === 'status')) {
    return { kind: 'run', field: name };
  }
  if (head === 'inputs' && field === undefined && name !== undefined && NAME.test(name)) {
    return { kind: 'input', name };
  }
  if (
    head === 'steps' &&
    name !== undefined &&
    NAME.test(name) &&
    (field === 'summary' || field === 'outputs')
  ) {
    return { kind: 'step', stepId: name, field };
  }
  return undefined;
}

/**
 * Replaces every reference with its value (outputs are joined with ", "). Text without `{{...}}`
 * is returned unchanged. Throws `PLAN_INVALID` naming the reference it cannot resolve.
 */
export function renderTemplate(text: string, ctx: TemplateContext): string {
  return substituteRefs(text, (raw, path) => {
    if (ctx.item !== undefined && path[0] === ctx.item.name) {
      const found = itemText(ctx.item.value, path.slice(1));
      if (found === undefined)
        throw new BatonError('PLAN_INVALID', `${raw}: the item has no ${path.slice(1).join('.')}`);
      return found;
    }
    const ref = parseTemplateRef(path);
    if (ref === undefined) {
      throw new BatonError(
        'PLAN_INVALID',
        `${raw} is not a template reference; allowed: ${ALLOWED_TEMPLATE_FORMS}`,
      );
    }
    return resolveRef(raw, ref, ctx);
  });
}

function resolveRef(raw: string, ref: TemplateRef, ctx: TemplateContext): string {
  if (ref.kind === 'run') {
    if (ref.field !== 'status') return ref.field === 'id' ? ctx.run.id : ctx.run.workspace;
    if (ctx.run.status !== undefined) return ctx.run.status;
    throw new BatonError('PLAN_INVALID', `${raw} is known only in a cleanup step (finally:, compensate:)`);
  }
  if (ref.kind === 'input') {
    const value = ownValue(ctx.inputs, ref.name);
    if (typeof value === 'string') return value;
    throw new BatonError('PLAN_INVALID', `${raw}: the run has no value for input "${ref.name}"`);
  }
  const result = ownValue(ctx.steps, ref.stepId);
  if (result === undefined && ctx.missingStepsEmpty === true) return '';
  if (result === undefined) {
    throw new BatonError(
      'PLAN_INVALID',
      `${raw}: step "${ref.stepId}" has no result in this run (it has not succeeded yet)`,
    );
  }
  if (ref.kind === 'result') return resultText(raw, ref.stepId, result, ref.path);
  return ref.field === 'summary' ? String(result.summary) : result.outputs.join(', ');
}

/**
 * What `{{<item>.<path>}}` gives for a fan-out item: the element at the path (own fields only) as
 * text, JSON for a list or a map; undefined when the item has no such field.
 */
export function itemText(value: unknown, path: readonly string[]): string | undefined {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  if (current === undefined) return undefined;
  return typeof current === 'string' ? current : JSON.stringify(current);
}

/** Own properties only: `__proto__`, `constructor` and friends never reach a prototype. */
function ownValue<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function splitRefPath(inner: string): string[] {
  const trimmed = inner.trim();
  return trimmed === '' ? [] : trimmed.split('.');
}

/** Steps whose results a step may read: template references for agents and models, dependencies for functions. */
export function stepReads(step: PlanStep): string[] {
  // A compensation reads the step it undoes (a function's ctx.results; texts may name it too).
  const undone = step.cleanup?.compensates;
  if (step.kind === 'fn') return undone === undefined ? step.dependsOn : [...step.dependsOn, undone];
  const ids = new Set<string>(undone === undefined ? [] : [undone]);
  const texts = [step.instruction ?? '', step.model?.prompt ?? '', step.model?.system ?? ''];
  if (step.subPlan) texts.push(...Object.values(step.subPlan.inputs));
  for (const text of texts) {
    for (const ref of listTemplateRefs(text)) {
      if (ref.path[0] === 'steps' && ref.path[1] !== undefined) ids.add(ref.path[1]);
    }
  }
  return [...ids];
}
