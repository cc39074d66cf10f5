import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { PlanIssue } from '../core/plan/issues.js';
import type { Plan } from '../core/plan/types.js';

/**
 * A step's `resultSchema` compiled with ajv (JSON Schema draft-07; `format` is not checked), and a
 * value's violations in words. ajv is loaded by the first plan that has a result schema (it costs
 * about 10 MB and 60 ms to load): `import 'baton-steps'` and plans without one never load it.
 */

let ajv: Ajv | undefined;

const newAjv = (): Ajv => {
  const { Ajv: AjvClass } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
  // strict: false: keywords of other drafts or tools are ignored rather than refused; no logging.
  return new AjvClass({ allErrors: true, strict: false, logger: false });
};

/** Compiled schemas by their JSON text: every attempt of a step brings its own copy. */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 100;

/** The schema's validator, or why ajv cannot compile it. */
export function compileResultSchema(
  schema: Record<string, unknown>,
): { ok: true; validate: ValidateFunction } | { ok: false; problem: string } {
  const key = JSON.stringify(schema);
  const known = compiled.get(key);
  if (known) return { ok: true, validate: known };
  ajv ??= newAjv();
  const copy = structuredClone(schema);
  try {
    const validate = ajv.compile(copy);
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(key, validate);
    return { ok: true, validate };
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : String(error) };
  } finally {
    // Out of ajv's own cache (kept here instead), with its `$id`, which another schema may reuse.
    ajv.removeSchema(copy);
  }
}

/** At most this many violations are named in a message. */
const MAX_VIOLATIONS_SHOWN = 20;

/** `/: missing required property "passed"; /score: must be number`. */
export function describeViolations(errors: readonly ErrorObject[]): string {
  const lines = errors.slice(0, MAX_VIOLATIONS_SHOWN).map((error) => {
    const at = error.instancePath === '' ? '/' : error.instancePath;
    if (error.keyword === 'required') {
      return `${at}: missing required property ${JSON.stringify(String(error.params.missingProperty))}`;
    }
    if (error.keyword === 'additionalProperties') {
      return `${at}: property ${JSON.stringify(String(error.params.additionalProperty))} is not allowed`;
    }
    return `${at}: ${error.message ?? error.keyword}`;
  });
  const more = errors.length - lines.length;
  if (more > 0) lines.push(`and ${more} more`);
  return lines.join('; ');
}

/**
 * The result schemas of a plan that ajv cannot compile, as plan issues: checked before a run is
 * stored (engine/start-run.ts), since the pure plan validation does not load ajv.
 */
export function resultSchemaIssues(plan: Plan): PlanIssue[] {
  const issues: PlanIssue[] = [];
  for (const step of plan.steps) {
    if (step.resultSchema === undefined) continue;
    const compiled = compileResultSchema(step.resultSchema);
    if (!compiled.ok) {
      issues.push({
        path: `steps.${step.id}.resultSchema`,
        problem: `is not a valid JSON Schema (draft-07): ${compiled.problem}; fix the schema`,
      });
    }
  }
  return issues;
}
