import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { PlanIssue } from '../core/plan/issues.js';
import type { Plan } from '../core/plan/types.js';
import { newSchemaChecker, uniqueItemsProblem } from '../model-call/json-schema.js';

/**
 * A plan's JSON Schemas (a step's `resultSchema`, a wait's `schema`) compiled with the one checker
 * of model-call/json-schema.ts (linear-time patterns, bounded `uniqueItems`), and a value's
 * violations in words. ajv is loaded by the first plan that has a schema (it costs about 10 MB and
 * 60 ms to load): `import 'baton-steps'` and plans without one never load it.
 */

let ajv: Ajv | undefined;

/** Compiled schemas by their JSON text: every attempt of a step brings its own copy. */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 100;

/** The schema's validator, or why it cannot be compiled (or could take more than linear time). */
export function compileSchema(
  schema: Record<string, unknown>,
): { ok: true; validate: ValidateFunction } | { ok: false; problem: string } {
  const key = JSON.stringify(schema);
  const known = compiled.get(key);
  if (known) return { ok: true, validate: known };
  const unbounded = uniqueItemsProblem(schema);
  if (unbounded !== undefined) return { ok: false, problem: unbounded };
  ajv ??= newSchemaChecker();
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
 * The schemas of a plan (each step's `resultSchema` and `wait.schema`) that cannot be compiled, as
 * plan issues: checked before a run is stored (engine/start-run.ts, runtime/plan-run.ts), since the
 * pure plan validation does not load ajv.
 */
export function planSchemaIssues(plan: Plan): PlanIssue[] {
  const issues: PlanIssue[] = [];
  for (const step of plan.steps) {
    const schemas: [string, Record<string, unknown> | undefined][] = [
      ['resultSchema', step.resultSchema],
      ['wait.schema', step.wait?.schema],
    ];
    for (const [field, schema] of schemas) {
      if (schema === undefined) continue;
      const compiled = compileSchema(schema);
      if (!compiled.ok) {
        issues.push({
          path: `steps.${step.id}.${field}`,
          problem: `is not a valid JSON Schema (draft-07): ${compiled.problem}; fix the schema`,
        });
      }
    }
  }
  return issues;
}
