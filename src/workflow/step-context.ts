import type { StepResult } from '../core/run-state.js';
import { type FunctionStepContext, StepFailure } from '../executors/function-executor.js';
import type { StepContext, StepPolicy } from './define-workflow.js';

/** The value a step's function returned, as its dependents see it in `ctx.results`. */
export function resultValue(result: StepResult): unknown {
  return result.value !== undefined ? result.value : result.summary;
}

/** What `ctx.results` holds: each dependency's value (a loop: this runs for every step). */
function resultValues(results: Record<string, StepResult>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const id in results) values[id] = resultValue(results[id]!);
  return values;
}

/** Builds the typed context of a workflow step from the function executor's context. */
export function stepContext(
  base: FunctionStepContext,
  policy: StepPolicy<unknown, string>,
): StepContext<Record<string, string>, Record<string, unknown>> {
  const idempotencyKey = `${base.runId}:${base.stepId}`;
  const context: StepContext<Record<string, string>, Record<string, unknown>> = {
    runId: base.runId,
    stepId: base.stepId,
    attempt: base.attempt,
    inputs: base.inputs,
    results: resultValues(base.results),
    signal: base.signal,
    shadow: base.shadow,
    ...(base.item === undefined ? {} : { item: base.item, itemIndex: base.itemIndex }),
    idempotencyKey,
    heartbeat(note) {
      base.heartbeat(note);
    },
    log(message) {
      base.log(message);
    },
    async effect<T>(key: string, fn: (idempotencyKey: string) => T | Promise<T>): Promise<T> {
      if (typeof key !== 'string' || key.length === 0 || key.length > 200) {
        throw new StepFailure(
          `ctx.effect key must be a string of 1-200 characters, got ${JSON.stringify(key)}`,
          'invalid',
        );
      }
      const effectKey = `${idempotencyKey}:${key}`;
      if (base.shadow) return (await wouldPerform(base, key, effectKey)) as T;
      const existing = await base.effects.begin(key);
      if (existing?.state === 'done') return existing.result as T;
      if (existing?.state === 'intent') {
        const known = await reconcile(context, policy, key);
        if (known !== null) {
          await base.effects.complete(key, known.result);
          return known.result as T;
        }
      }
      const result = await fn(effectKey);
      await base.effects.complete(key, result === undefined ? null : result);
      return result;
    },
  };
  return context;
}

/** A shadow run performs no effect: it records what would have run and returns the stand-in. */
async function wouldPerform(base: FunctionStepContext, key: string, effectKey: string): Promise<unknown> {
  const result = base.shadowResult;
  await base.recordEvents([
    {
      type: 'step.would_execute',
      stepId: base.stepId,
      attempt: base.attempt,
      executor: 'fn',
      inputs: { effect: key, idempotencyKey: effectKey },
      result: result ?? null,
      effect: key,
    },
  ]);
  return result;
}

/**
 * An intent without a result: the effect may or may not have happened. `reconcile` decides; an
 * idempotent step may run it again; otherwise the step is blocked as an unknown outcome.
 */
async function reconcile(
  context: StepContext<Record<string, string>, Record<string, unknown>>,
  policy: StepPolicy<unknown, string>,
  key: string,
): Promise<{ result: unknown } | null> {
  if (policy.reconcile) {
    const found = await policy.reconcile(context, key);
    return found.happened ? { result: found.result } : null;
  }
  if (policy.sideEffect === 'idempotent') return null;
  throw new StepFailure(
    `effect "${key}" of step ${context.stepId} started in an earlier attempt but its outcome was never recorded; ` +
      `it is not repeated blindly: check what happened, then baton resolve ${context.runId} ${context.stepId} --result <json> ` +
      '(or declare the step idempotent, or give it reconcile)',
    'unknown_outcome',
  );
}
