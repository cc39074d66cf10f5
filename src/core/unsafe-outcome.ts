import type { StepOutcome } from './failure.js';
import type { SideEffect } from './plan/types.js';

type FailedOutcome = Extract<StepOutcome, { ok: false }>;

/**
 * What an attempt that ended without an answer counts as: interrupted (a dead worker, a lost
 * lease: `completeStep`) or cut at its timeout (`engine/attempt-deadline.ts`). A step with an
 * `unsafe` side effect may or may not have had its effect, so its outcome becomes
 * `unknown_outcome`: blocked for a human, never retried blindly (nor handed to a fallback). Any
 * other step keeps the outcome it was given. The one place this rule and its message live.
 */
export function unknownIfUnsafe(
  outcome: FailedOutcome,
  sideEffect: SideEffect | undefined,
  where: { runId: string; stepId: string },
): FailedOutcome {
  if (sideEffect !== 'unsafe') return outcome;
  const { runId, stepId } = where;
  return {
    ...outcome,
    failureClass: 'unknown_outcome',
    message: `${outcome.message}; the step has an unsafe side effect, so whether it happened is unknown: check, then baton resolve ${runId} ${stepId} --result <json> (or baton retry ${runId} ${stepId})`,
  };
}
