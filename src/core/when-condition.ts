import type { Draft } from './draft.js';
import type { PlanStep } from './plan/types.js';
import { type RunState, type StepResult, type StepState, stepOf } from './run-state.js';
import { evaluateExpression, firstLineOf } from './when-language.js';

/** What a step's `when` decided: run it, skip it (with the reason), or block it (it could not be decided). */
export type WhenDecision =
  | { run: true }
  | { run: false; skipReason: string }
  | { run: false; invalid: string };

const RUN: WhenDecision = { run: true };

/**
 * Decides a step's `when` over `{ inputs, steps: { <dep>: { result, status } } }`, its direct
 * dependencies being settled (succeeded, degraded or skipped). `result` is the dependency's
 * structured value when it has one (a fn step's return value, an agent's resultFile), else its summary text; null for a
 * skipped step. Anything but true or false (a missing field, a type error) is `invalid`: a
 * condition is never taken as true or false by default.
 */
export function decideWhen(
  run: Pick<RunState, 'plan' | 'steps'>,
  step: PlanStep,
  inputs: Readonly<Record<string, string>>,
): WhenDecision {
  const expression = step.when;
  if (expression === undefined) return RUN;
  const steps: Record<string, { result: unknown; status: string }> = {};
  for (const dep of step.dependsOn) {
    const state = stepOf(run, dep);
    if (!state) continue;
    const result = resultOf(state.resultJson);
    if ('tooLarge' in result) {
      return {
        run: false,
        invalid: `when ${expression}: the result of step "${dep}" (${result.tooLarge} bytes) is kept as an artifact, too large for a condition: have "${dep}" return a small value to decide on`,
      };
    }
    // A skipped step's result is null, unless it holds a decision (a rejected wait: { approved: false, ... }).
    steps[dep] = { result: result.value, status: state.status };
  }
  let value: unknown;
  try {
    value = evaluateExpression(expression, { inputs, steps });
  } catch (error) {
    return { run: false, invalid: `when ${expression}: ${firstLineOf(error)}` };
  }
  if (value === true) return RUN;
  if (value === false) return { run: false, skipReason: `when ${expression} was false` };
  return {
    run: false,
    invalid: `when ${expression}: gave ${describe(value)}, not true or false: compare it, e.g. steps.check.result.passed == false`,
  };
}

/**
 * A step whose `when` did not say run, settled in `draft`: skipped with the reason (shown as its
 * last error; true: the caller releases its dependents, as after `baton skip`), or blocked
 * `invalid` with the message, for a human to fix the plan or skip the step (false).
 */
export function settleUnrunStep(
  draft: Draft,
  stepId: string,
  decision: Exclude<WhenDecision, { run: true }>,
): boolean {
  const cleared = { dueAt: null, leaseOwner: null, leaseExpiresAt: null };
  if ('skipReason' in decision) {
    draft.setStep(stepId, {
      ...cleared,
      status: 'skipped',
      blockedReason: null,
      lastError: decision.skipReason,
    });
    draft.events.push({ type: 'step.skipped', stepId, reason: decision.skipReason });
    return true;
  }
  const reason = `${decision.invalid}; fix steps.${stepId}.when, or: baton skip ${draft.run.id} ${stepId}`;
  draft.setStep(stepId, {
    ...cleared,
    status: 'blocked',
    lastError: decision.invalid,
    lastFailureClass: 'invalid',
    blockedReason: reason,
  });
  draft.events.push({ type: 'step.blocked', stepId, failureClass: 'invalid', reason });
  return false;
}

/** A settled dependency's result as a condition (or a fan-out's items) reads it: null for a skipped step. */
export function conditionResult(
  state: Pick<StepState, 'status' | 'resultJson'>,
): { value: unknown } | { tooLarge: number } {
  return state.status === 'skipped' ? { value: null } : resultOf(state.resultJson);
}

function resultOf(resultJson: string | null): { value: unknown } | { tooLarge: number } {
  if (resultJson === null) return { value: null };
  const result = JSON.parse(resultJson) as StepResult;
  if (result.ref) return { tooLarge: result.ref.size };
  return { value: result.value === undefined ? result.summary : result.value };
}

function describe(value: unknown): string {
  if (typeof value === 'bigint') return `the number ${value}`;
  if (typeof value === 'string') return `the text ${JSON.stringify(value.slice(0, 40))}`;
  if (value === null) return 'null';
  return Array.isArray(value)
    ? 'a list'
    : typeof value === 'object'
      ? 'a map'
      : `${typeof value} ${String(value)}`;
}
