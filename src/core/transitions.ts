import { fullJitterDelayMs, type RandomSource } from './backoff.js';
import { type BudgetBreach, budgetBreach, describeBreach } from './budget.js';
import { Draft, planStep, stepState, type Transition } from './draft.js';
import { BatonError } from './errors.js';
import type { BatonEvent } from './events.js';
import { isRetryable, type StepOutcome } from './failure.js';
import { failureFingerprint } from './fingerprint.js';
import { expandForEach } from './for-each.js';
import { firstDueAt, notBeforeOf } from './not-before.js';
import { DEFAULT_RETRY, type Plan } from './plan/types.js';
import { DUE_STEP_STATUSES, freshStepState, type RunState, type StepState } from './run-state.js';
import { unknownIfUnsafe } from './unsafe-outcome.js';
import { decideWhen, settleUnrunStep } from './when-condition.js';

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
  run: Pick<RunState, 'id' | 'inputs'> = { id: '' },
): StepState[] {
  // Only a step without dependencies is ready now, and its notBefore reads no step's result.
  const reads = { ...run, steps: [] };
  return plan.steps.map((step) => {
    const done = completed.has(step.id);
    const ready = !done && step.dependsOn.every((dep) => completed.has(dep));
    const state = freshStepState(step.id, ready ? firstDueAt(reads, step, now) : null, now);
    return done ? { ...state, status: 'succeeded', resultJson: completedResultJson } : state;
  });
}

/**
 * Claims a due step for `owner` until `now + leaseMs`. A step whose `when` is false is skipped
 * instead (one that cannot be decided is blocked), and its dependents released. When a budget stops it instead, the
 * transition blocks the run (maxSteps, a run budget) or the step (its own budget), or hands the
 * step to its fallback: the step is then not `running`, and the caller claims nothing.
 */
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
  const declared = planStep(run.plan, stepId);
  // A step without dependencies has its condition decided here, before its first attempt (one with
  // dependencies had it decided when they settled: Draft.releaseDependents); so does a step a human
  // retried after its condition could not be decided. A step it skips costs no attempt and no budget.
  const decision =
    step.attempt === 0 && declared.when !== undefined ? decideWhen(run, declared, run.inputs ?? {}) : null;
  if (decision && !decision.run) {
    if (settleUnrunStep(draft, stepId, decision)) draft.releaseDependents(stepId);
    return draft.finish();
  }
  // notBefore is checked before the first attempt, however the step became ready: one that
  // names a later instant makes it due then; one that names none blocks it.
  const notBefore = step.attempt === 0 ? notBeforeOf(run, declared) : null;
  if (notBefore !== null && 'invalid' in notBefore) return blockNotBefore(draft, stepId, notBefore.invalid);
  if (notBefore !== null && notBefore.at > now) {
    draft.setStep(stepId, { dueAt: notBefore.at });
    return draft.finish();
  }
  // A fan-out is not run itself: claiming it expands it into its items (core/for-each.ts).
  if (declared.forEach) {
    expandForEach(draft, declared);
    return draft.finish();
  }
  const max = run.plan.limits.maxSteps;
  // Cleanup always runs: the run's budgets stop its work, never what undoes it (core/cleanup.ts).
  const cleanup = declared.cleanup !== undefined;
  if (!cleanup && run.attemptsTotal >= max) {
    const reason = `budget: maxSteps ${max} reached (${run.attemptsTotal} attempts); to allow ${max} more: baton resume ${run.id}`;
    draft.events.push({ type: 'budget.exceeded', limit: 'maxSteps', value: run.attemptsTotal, max });
    draft.events.push({ type: 'run.blocked', reason });
    draft.run = { ...run, status: 'blocked', blockedReason: reason };
    return draft.finish();
  }
  const runBreach = cleanup ? null : budgetBreach(run.plan.limits, run.usage, run.createdAt, now);
  if (runBreach) return stopOnBudget(draft.finish(), runBreach);
  const stepBreach = step.onFallback
    ? null
    : budgetBreach(declared.budget, step.usage, step.firstStartedAt, now);
  if (stepBreach) {
    if (declared.fallback) {
      draft.events.push(budgetEvent(stepBreach, stepId));
      return startFallback(draft, stepId, `step budget: ${describeBreach(stepBreach)}`).finish();
    }
    return blockStepOnBudget(draft, stepId, stepBreach);
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
    firstStartedAt: step.firstStartedAt ?? now,
  });
  draft.run = { ...run, attemptsTotal: run.attemptsTotal + 1 };
  draft.events.push({ type: 'step.started', stepId, attempt, owner, leaseExpiresAt });
  return draft.finish();
}

/** A step whose notBefore names no instant is blocked `invalid` for a human: fix the input, or skip it. */
function blockNotBefore(draft: Draft, stepId: string, problem: string): Transition {
  const reason = `${problem}; give the run a date-time with an offset, or: baton skip ${draft.run.id} ${stepId}`;
  draft.setStep(stepId, {
    status: 'blocked',
    dueAt: null,
    lastError: problem,
    lastFailureClass: 'invalid',
    blockedReason: reason,
  });
  draft.events.push({ type: 'step.blocked', stepId, failureClass: 'invalid', reason });
  return draft.finish();
}

/** Stops a run at one of its budgets: no new work starts; `baton resume` allows as much again. */
function stopOnBudget(transition: Transition, breach: BudgetBreach): Transition {
  const run = transition.run;
  const reason = `budget: ${describeBreach(breach)}; to allow as much again: baton resume ${run.id}`;
  return {
    ...transition,
    run: { ...run, status: 'blocked', blockedReason: reason },
    events: [
      ...transition.events,
      { type: 'budget.exceeded', limit: breach.limit, value: breach.value, max: breach.max },
      { type: 'run.blocked', reason },
    ],
  };
}

/** The step's own executor gave up: its fallback runs next, with fresh tries; success is `degraded`. */
function startFallback(draft: Draft, stepId: string, reason: string): Draft {
  draft.setStep(stepId, {
    status: 'ready',
    dueAt: draft.now,
    tries: 0,
    onFallback: true,
    fingerprint: null,
    fingerprintRepeats: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    blockedReason: null,
  });
  draft.events.push({ type: 'step.fallback', stepId, reason: reason.slice(0, 500) });
  return draft;
}

function budgetEvent(breach: BudgetBreach, stepId: string): BatonEvent {
  return { type: 'budget.exceeded', limit: breach.limit, value: breach.value, max: breach.max, stepId };
}

/** Blocks one step at its own budget; the rest of the run goes on. */
function blockStepOnBudget(draft: Draft, stepId: string, breach: BudgetBreach): Transition {
  return blockStepOnBudgetDraft(draft, stepId, breach).finish();
}

function blockStepOnBudgetDraft(draft: Draft, stepId: string, breach: BudgetBreach): Draft {
  const reason = `step budget: ${describeBreach(breach)}; raise steps.${stepId}.budget, or: baton skip ${draft.run.id} ${stepId}`;
  draft.setStep(stepId, {
    status: 'blocked',
    dueAt: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    lastFailureClass: 'budget',
    blockedReason: reason,
  });
  draft.events.push({
    type: 'budget.exceeded',
    limit: breach.limit,
    value: breach.value,
    max: breach.max,
    stepId,
  });
  draft.events.push({ type: 'step.blocked', stepId, failureClass: 'budget', reason });
  return draft;
}

/**
 * Records the outcome of the running attempt: success releases dependents; a failure is retried
 * with full-jitter backoff (or its `retryAfterMs`) when its class is retryable, the tries are not
 * used up and the same failure has not repeated `noProgressAfter` times; otherwise the step's
 * fallback runs next when it has one (not for an unknown outcome), else the step is blocked for a
 * human. Throws INVALID_TRANSITION when the step is not running.
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
  return recordOutcome(run, step, interruptionOutcome(run, stepId, outcome), now, random, resultJson);
}

/** An interruption is an attempt without an answer: see unknownIfUnsafe. */
function interruptionOutcome(run: RunState, stepId: string, outcome: StepOutcome): StepOutcome {
  if (outcome.ok || outcome.failureClass !== 'interrupted') return outcome;
  return unknownIfUnsafe(outcome, planStep(run.plan, stepId).sideEffect, { runId: run.id, stepId });
}

function recordOutcome(
  run: RunState,
  step: StepState,
  outcome: StepOutcome,
  now: number,
  random: RandomSource,
  resultJson: string | null,
): Transition {
  const stepId = step.stepId;
  const draft = new Draft(run, now);
  // Reported usage counts against the run and the step whatever the outcome.
  if (outcome.usage) draft.addUsage(stepId, outcome.usage);
  // A child run's attempts count in this run's maxSteps, as its spend counts in its budgets.
  if (outcome.childAttempts)
    draft.run = { ...draft.run, attemptsTotal: draft.run.attemptsTotal + outcome.childAttempts };
  const durationMs = step.startedAt === null ? null : now - step.startedAt;
  const cleared = { leaseOwner: null, leaseExpiresAt: null, dueAt: null };
  if (outcome.ok) {
    const degraded = step.onFallback
      ? `finished by its fallback after: ${step.lastError ?? 'failure'}`
      : outcome.degraded;
    draft.setStep(stepId, {
      ...cleared,
      status: degraded === undefined ? 'succeeded' : 'degraded',
      resultJson,
      lastError: null,
      lastFailureClass: null,
      blockedReason: null,
    });
    const summary = outcome.summary.slice(0, 200);
    draft.events.push(
      degraded === undefined
        ? { type: 'step.succeeded', stepId, attempt: step.attempt, durationMs, summary }
        : {
            type: 'step.degraded',
            stepId,
            attempt: step.attempt,
            durationMs,
            summary,
            reason: degraded.slice(0, 500),
          },
    );
    draft.releaseDependents(stepId);
    return finishWithinBudget(draft);
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
  // An interruption (dead worker, lost lease) is not the step's failure: it gives its try back and
  // spends a budget of its own.
  const interrupted = outcome.failureClass === 'interrupted';
  const interruptions = (step.interruptions ?? 0) + (interrupted ? 1 : 0);
  const failed = {
    ...cleared,
    lastError: outcome.message,
    lastFailureClass: outcome.failureClass,
    fingerprint,
    fingerprintRepeats: repeats,
    ...(interrupted ? { tries: Math.max(0, step.tries - 1), interruptions } : {}),
  };
  const policy = planStep(run.plan, stepId).retry;
  const noProgressAfter = run.plan.limits.noProgressAfter;
  let blockClass = outcome.failureClass;
  let reason: string | null = null;
  // Snapshots stored before maxInterruptions existed lack it.
  const maxInterruptions = policy.maxInterruptions ?? DEFAULT_RETRY.maxInterruptions;
  if (interrupted) {
    if (interruptions > maxInterruptions)
      reason = `interrupted ${interruptions} times (retry.maxInterruptions ${maxInterruptions}); last: ${outcome.message}`;
  } else if (!isRetryable(outcome.failureClass)) {
    reason = `${outcome.failureClass} failure, not retried: ${outcome.message}`;
  } else if (repeats >= noProgressAfter && step.tries < policy.maxAttempts) {
    blockClass = 'no_progress';
    reason = `no progress: the same ${outcome.failureClass} failure ${repeats} times in a row: ${outcome.message}`;
  } else if (step.tries >= policy.maxAttempts) {
    reason = `failed ${step.tries} of ${policy.maxAttempts} allowed tries; last (${outcome.failureClass}): ${outcome.message}`;
  }
  const plannedFallback = planStep(run.plan, stepId).fallback && !step.onFallback;
  if (reason !== null) {
    if (plannedFallback && blockClass !== 'unknown_outcome') {
      draft.setStep(stepId, failed);
      return finishWithinBudget(startFallback(draft, stepId, reason));
    }
    const why = step.onFallback ? `its fallback failed too: ${reason}` : reason;
    draft.setStep(stepId, { ...failed, status: 'blocked', blockedReason: why });
    draft.events.push({ type: 'step.blocked', stepId, failureClass: blockClass, reason: why });
    return finishWithinBudget(draft);
  }
  const stepBreach = budgetBreach(
    planStep(run.plan, stepId).budget,
    draft.get(stepId).usage,
    step.firstStartedAt,
    now,
  );
  if (stepBreach && !step.onFallback) {
    draft.setStep(stepId, failed);
    if (plannedFallback) {
      draft.events.push(budgetEvent(stepBreach, stepId));
      return finishWithinBudget(startFallback(draft, stepId, `step budget: ${describeBreach(stepBreach)}`));
    }
    return finishWithinBudget(blockStepOnBudgetDraft(draft, stepId, stepBreach));
  }
  const delayMs = outcome.retryAfterMs ?? fullJitterDelayMs(policy, interrupted ? 1 : step.tries, random);
  const dueAt = now + delayMs;
  draft.setStep(stepId, { ...failed, status: 'retry_wait', dueAt, blockedReason: null });
  draft.events.push({ type: 'step.retry_scheduled', stepId, nextAttempt: step.attempt + 1, delayMs, dueAt });
  return finishWithinBudget(draft);
}

/**
 * Finishes the draft, then stops the run if it is still going and has reached one of its budgets
 * (a run whose last step just succeeded is done, whatever it spent).
 */
function finishWithinBudget(draft: Draft): Transition {
  const transition = draft.finish();
  const run = transition.run;
  if (run.status !== 'running') return transition;
  const breach = budgetBreach(run.plan.limits, run.usage, run.createdAt, draft.now);
  return breach ? stopOnBudget(transition, breach) : transition;
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
