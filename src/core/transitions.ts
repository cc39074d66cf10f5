import { fullJitterDelayMs, type RandomSource } from './backoff.js';
import { Draft, planStep, stepState, type Transition } from './draft.js';
import { BatonError } from './errors.js';
import { isRetryable, type StepOutcome } from './failure.js';
import { failureFingerprint } from './fingerprint.js';
import type { Plan } from './plan/types.js';
import { DUE_STEP_STATUSES, type RunState, type StepState, stepOf } from './run-state.js';

export type { Transition } from './draft.js';
export { deriveRunStatus } from './draft.js';

/**
 * Initial step states of a new run: steps without dependencies are ready after their delay.
 * `completed` steps (a run imported half done) start succeeded, and release their dependents.
 */
export function initialStepStates(
  plan: Plan,
  now: number,
  completed: ReadonlySet<string> = new Set(),
  completedResultJson: string | null = null,
): StepState[] {
  return plan.steps.map((step) => {
    const done = completed.has(step.id);
    const ready = !done && step.dependsOn.every((dep) => completed.has(dep));
    return {
      stepId: step.id,
      status: done ? 'succeeded' : ready ? 'ready' : 'pending',
      attempt: 0,
      tries: 0,
      dueAt: ready ? now + step.delayBeforeMs : null,
      leaseOwner: null,
      leaseExpiresAt: null,
      startedAt: null,
      lastError: null,
      lastFailureClass: null,
      fingerprint: null,
      fingerprintRepeats: 0,
      resultJson: done ? completedResultJson : null,
      blockedReason: null,
      updatedAt: now,
    };
  });
}

/** Claims a due step for `owner` until `now + leaseMs`. Returns null when the run's budget stops it. */
export function claimStep(
  run: RunState,
  stepId: string,
  owner: string,
  now: number,
  leaseMs: number,
): Transition {
  const step = stepState(run, stepId);
  if (run.status !== 'running' || !DUE_STEP_STATUSES.has(step.status)) {
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${stepId} of run ${run.id} is ${step.status} (run ${run.status}): it cannot be claimed`,
    );
  }
  const draft = new Draft(run, now);
  const max = run.plan.limits.maxSteps;
  if (run.attemptsTotal >= max) {
    const reason = `budget: maxSteps ${max} reached (${run.attemptsTotal} attempts); to allow ${max} more: baton resume ${run.id}`;
    draft.events.push({ type: 'budget.exceeded', limit: 'maxSteps', value: run.attemptsTotal, max });
    draft.events.push({ type: 'run.blocked', reason });
    draft.run = { ...run, status: 'blocked', blockedReason: reason };
    return draft.finish();
  }
  const attempt = step.attempt + 1;
  const leaseExpiresAt = now + leaseMs;
  draft.setStep(stepId, {
    status: 'running',
    attempt,
    tries: step.tries + 1,
    dueAt: null,
    leaseOwner: owner,
    leaseExpiresAt,
    startedAt: now,
  });
  draft.run = { ...run, attemptsTotal: run.attemptsTotal + 1 };
  draft.events.push({ type: 'step.started', stepId, attempt, owner, leaseExpiresAt });
  return draft.finish();
}

/** True when `owner` still holds the lease of this attempt: otherwise its outcome is stale. */
export function holdsLease(run: RunState, stepId: string, attempt: number, owner: string): boolean {
  const step = stepOf(run, stepId);
  return step?.status === 'running' && step.attempt === attempt && step.leaseOwner === owner;
}

/**
 * Records the outcome of the running attempt: success releases dependents; a failure is retried
 * with full-jitter backoff when its class is retryable, the tries are not used up and the same
 * failure has not repeated `noProgressAfter` times; otherwise the step is blocked for a human.
 */
export function completeStep(
  run: RunState,
  stepId: string,
  outcome: StepOutcome,
  now: number,
  random: RandomSource,
  resultJson: string | null = null,
): Transition {
  const step = stepState(run, stepId);
  if (step.status !== 'running') {
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${stepId} of run ${run.id} is ${step.status}: only a running step can complete`,
    );
  }
  const draft = new Draft(run, now);
  const durationMs = step.startedAt === null ? null : now - step.startedAt;
  const cleared = { leaseOwner: null, leaseExpiresAt: null, dueAt: null };
  if (outcome.ok) {
    draft.setStep(stepId, {
      ...cleared,
      status: 'succeeded',
      resultJson,
      lastError: null,
      lastFailureClass: null,
      blockedReason: null,
    });
    draft.events.push({
      type: 'step.succeeded',
      stepId,
      attempt: step.attempt,
      durationMs,
      summary: outcome.summary.slice(0, 200),
    });
    draft.releaseDependents(stepId);
    return draft.finish();
  }
  const fingerprint = failureFingerprint(stepId, outcome.failureClass, outcome.message);
  const repeats = step.fingerprint === fingerprint ? step.fingerprintRepeats + 1 : 1;
  draft.events.push({
    type: 'step.failed',
    stepId,
    attempt: step.attempt,
    durationMs,
    failureClass: outcome.failureClass,
    message: outcome.message,
    exitCode: outcome.exitCode ?? null,
    fingerprint,
  });
  const failed = {
    ...cleared,
    lastError: outcome.message,
    lastFailureClass: outcome.failureClass,
    fingerprint,
    fingerprintRepeats: repeats,
  };
  const policy = planStep(run.plan, stepId).retry;
  const noProgressAfter = run.plan.limits.noProgressAfter;
  let blockClass = outcome.failureClass;
  let reason: string | null = null;
  if (!isRetryable(outcome.failureClass)) {
    reason = `${outcome.failureClass} failure, not retried: ${outcome.message}`;
  } else if (repeats >= noProgressAfter && step.tries < policy.maxAttempts) {
    blockClass = 'no_progress';
    reason = `no progress: the same ${outcome.failureClass} failure ${repeats} times in a row: ${outcome.message}`;
  } else if (step.tries >= policy.maxAttempts) {
    reason = `failed ${step.tries} of ${policy.maxAttempts} allowed tries; last (${outcome.failureClass}): ${outcome.message}`;
  }
  if (reason !== null) {
    draft.setStep(stepId, { ...failed, status: 'blocked', blockedReason: reason });
    draft.events.push({ type: 'step.blocked', stepId, failureClass: blockClass, reason });
    return draft.finish();
  }
  const delayMs = outcome.retryAfterMs ?? fullJitterDelayMs(policy, step.tries, random);
  const dueAt = now + delayMs;
  draft.setStep(stepId, { ...failed, status: 'retry_wait', dueAt, blockedReason: null });
  draft.events.push({ type: 'step.retry_scheduled', stepId, nextAttempt: step.attempt + 1, delayMs, dueAt });
  return draft.finish();
}

/** A lease that ran out means its worker died or stalled: the attempt ends `interrupted`. */
export function expireLease(run: RunState, stepId: string, now: number, random: RandomSource): Transition {
  const step = stepState(run, stepId);
  const owner = step.leaseOwner ?? 'unknown';
  return completeStep(
    run,
    stepId,
    {
      ok: false,
      failureClass: 'interrupted',
      message: `lease of worker ${owner} expired: the worker died or stalled mid-step`,
    },
    now,
    random,
  );
}
