import { fullJitterDelayMs, type RandomSource } from './backoff.js';
import { BatonError } from './errors.js';
import type { BatonEvent } from './events.js';
import { isRetryable, type StepOutcome } from './failure.js';
import { failureFingerprint } from './fingerprint.js';
import type { Plan, PlanStep } from './plan/types.js';
import {
  DUE_STEP_STATUSES,
  FINAL_RUN_STATUSES,
  planIndex,
  type RunState,
  type RunStatus,
  SATISFIED_STEP_STATUSES,
  type StepState,
  stepOf,
} from './run-state.js';

/**
 * The run/step state machine as pure functions of (state, event, now). Each returns the new run
 * state, the ids of the steps it changed and the events to append; the store writes all three in
 * one transaction.
 */
export interface Transition {
  run: RunState;
  changedSteps: string[];
  events: BatonEvent[];
  /** Set when the plan snapshot itself changed (only before any step ran: approval with a delay). */
  planChanged?: boolean;
}

function planStep(plan: Plan, stepId: string): PlanStep {
  const step = plan.steps.find((candidate) => candidate.id === stepId);
  if (!step)
    throw new BatonError(
      'STEP_NOT_FOUND',
      `unknown step "${stepId}" (known: ${plan.steps.map((s) => s.id).join(', ')})`,
    );
  return step;
}

function stepState(run: RunState, stepId: string): StepState {
  const state = stepOf(run, stepId);
  if (!state) {
    throw new BatonError(
      'STEP_NOT_FOUND',
      `run ${run.id} has no step "${stepId}" (known: ${run.steps.map((s) => s.stepId).join(', ')})`,
    );
  }
  return state;
}

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

/** A builder that collects step changes and events, then settles the run status once. */
class Draft {
  readonly steps: StepState[];
  readonly changed = new Set<string>();
  readonly events: BatonEvent[] = [];
  run: RunState;

  constructor(
    run: RunState,
    readonly now: number,
  ) {
    this.run = run;
    this.steps = [...run.steps];
  }

  setStep(stepId: string, patch: Partial<StepState>): StepState {
    const position = planIndex(this.run.plan).position.get(stepId)!;
    const next = { ...this.steps[position]!, ...patch, updatedAt: this.now };
    this.steps[position] = next;
    this.changed.add(stepId);
    return next;
  }

  /** Dependents of `stepId` whose dependencies are all satisfied become ready after their delay. */
  releaseDependents(stepId: string): void {
    const { position, dependents } = planIndex(this.run.plan);
    for (const dependentId of dependents.get(stepId) ?? []) {
      const step = this.run.plan.steps[position.get(dependentId)!]!;
      if (this.get(step.id).status !== 'pending') continue;
      if (step.dependsOn.every((dep) => SATISFIED_STEP_STATUSES.has(this.get(dep).status))) {
        this.setStep(step.id, { status: 'ready', dueAt: this.now + step.delayBeforeMs });
      }
    }
  }

  get(stepId: string): StepState {
    return this.steps[planIndex(this.run.plan).position.get(stepId)!]!;
  }

  finish(): Transition {
    const before = this.run.status;
    let status: RunStatus = before;
    let blockedReason = this.run.blockedReason;
    if (!FINAL_RUN_STATUSES.has(before) && before !== 'awaiting_approval' && !isBudgetBlock(this.run)) {
      status = deriveRunStatus(this.steps);
      blockedReason = status === 'blocked' ? describeBlockedSteps(this.steps) : null;
      if (status !== before || (status === 'blocked' && blockedReason !== this.run.blockedReason)) {
        if (status === 'succeeded') this.events.push({ type: 'run.succeeded' });
        if (status === 'blocked') this.events.push({ type: 'run.blocked', reason: blockedReason ?? '' });
      }
    }
    const run: RunState = {
      ...this.run,
      status,
      blockedReason,
      steps: this.steps,
      updatedAt: this.now,
      finishedAt: FINAL_RUN_STATUSES.has(status) ? (this.run.finishedAt ?? this.now) : null,
    };
    return { run, changedSteps: [...this.changed], events: this.events };
  }
}

function isBudgetBlock(run: RunState): boolean {
  return run.status === 'blocked' && (run.blockedReason?.startsWith('budget:') ?? false);
}

/** running while anything can still happen; succeeded when every step is satisfied; else blocked. */
export function deriveRunStatus(steps: readonly StepState[]): RunStatus {
  let allSatisfied = true;
  let active = false;
  let blocked = false;
  for (const step of steps) {
    if (!SATISFIED_STEP_STATUSES.has(step.status)) allSatisfied = false;
    if (step.status === 'running' || DUE_STEP_STATUSES.has(step.status)) active = true;
    if (step.status === 'blocked') blocked = true;
  }
  if (allSatisfied) return 'succeeded';
  if (active) return 'running';
  return blocked ? 'blocked' : 'running';
}

function describeBlockedSteps(steps: readonly StepState[]): string {
  return steps
    .filter((step) => step.status === 'blocked')
    .map((step) => `step ${step.stepId}: ${step.blockedReason ?? 'blocked'}`)
    .join('; ');
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

/** `baton retry`: a blocked or waiting step becomes due now with fresh tries. */
export function retryStep(run: RunState, stepId: string, now: number): Transition {
  const step = stepState(run, stepId);
  if (FINAL_RUN_STATUSES.has(run.status)) {
    throw new BatonError('INVALID_TRANSITION', `run ${run.id} is ${run.status}: its steps cannot be retried`);
  }
  if (step.status !== 'blocked' && step.status !== 'retry_wait') {
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${stepId} is ${step.status}: only a blocked or retry_wait step can be retried`,
    );
  }
  const draft = new Draft(run, now);
  draft.setStep(stepId, {
    status: 'ready',
    dueAt: now,
    tries: 0,
    fingerprint: null,
    fingerprintRepeats: 0,
    blockedReason: null,
  });
  draft.events.push({ type: 'step.retry_requested', stepId });
  if (run.status === 'blocked' && !isBudgetBlock(run))
    draft.events.push({ type: 'run.resumed', reason: `retry of step ${stepId}` });
  return draft.finish();
}

/** `baton skip`: a step that is not running or done is marked skipped; its dependents may start. */
export function skipStep(run: RunState, stepId: string, now: number): Transition {
  const step = stepState(run, stepId);
  if (FINAL_RUN_STATUSES.has(run.status)) {
    throw new BatonError('INVALID_TRANSITION', `run ${run.id} is ${run.status}: its steps cannot be skipped`);
  }
  if (!['pending', 'ready', 'retry_wait', 'blocked'].includes(step.status)) {
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${stepId} is ${step.status}: only a pending, ready, waiting or blocked step can be skipped`,
    );
  }
  const draft = new Draft(run, now);
  draft.setStep(stepId, { status: 'skipped', dueAt: null, blockedReason: null });
  draft.events.push({ type: 'step.skipped', stepId });
  draft.releaseDependents(stepId);
  if (run.status === 'blocked' && !isBudgetBlock(run))
    draft.events.push({ type: 'run.resumed', reason: `skip of step ${stepId}` });
  return draft.finish();
}

/** `baton cancel`: the run and every unfinished step end; a running attempt's outcome will be discarded. */
export function cancelRun(run: RunState, now: number): Transition {
  if (FINAL_RUN_STATUSES.has(run.status)) {
    throw new BatonError('INVALID_TRANSITION', `run ${run.id} is already ${run.status}`);
  }
  const draft = new Draft(run, now);
  for (const step of run.steps) {
    if (
      step.status === 'succeeded' ||
      step.status === 'skipped' ||
      step.status === 'degraded' ||
      step.status === 'cancelled'
    )
      continue;
    draft.setStep(step.stepId, { status: 'cancelled', dueAt: null, leaseOwner: null, leaseExpiresAt: null });
    draft.events.push({ type: 'step.cancelled', stepId: step.stepId });
  }
  draft.events.push({ type: 'run.cancelled' });
  draft.run = { ...run, status: 'cancelled' };
  return draft.finish();
}

/**
 * `baton approve`: a proposed run starts now. `delayMs` (the skill's "wait between steps?") becomes
 * every dependent step's minimum `delayBeforeMs`; nothing has run yet, so the snapshot may change.
 */
export function approveRun(run: RunState, now: number, delayMs = 0): Transition {
  if (run.status !== 'awaiting_approval') {
    throw new BatonError(
      'INVALID_TRANSITION',
      `run ${run.id} is ${run.status}: only a run awaiting approval can be approved`,
    );
  }
  const plan: Plan =
    delayMs > 0
      ? {
          ...run.plan,
          steps: run.plan.steps.map((step) =>
            step.dependsOn.length > 0 && step.delayBeforeMs < delayMs
              ? { ...step, delayBeforeMs: delayMs }
              : step,
          ),
        }
      : run.plan;
  const draft = new Draft({ ...run, plan, status: 'running' }, now);
  for (const step of plan.steps) {
    if (draft.get(step.id).status === 'ready') draft.setStep(step.id, { dueAt: now + step.delayBeforeMs });
  }
  draft.events.push({ type: 'run.approved', delayMs });
  return { ...draft.finish(), planChanged: plan !== run.plan };
}

/** `baton reject`: a proposed run is dropped; it never starts. */
export function rejectRun(run: RunState, now: number): Transition {
  if (run.status !== 'awaiting_approval') {
    throw new BatonError(
      'INVALID_TRANSITION',
      `run ${run.id} is ${run.status}: only a run awaiting approval can be rejected`,
    );
  }
  const cancelled = cancelRun({ ...run, status: 'running' }, now);
  return { ...cancelled, events: [{ type: 'run.rejected' }, ...cancelled.events] };
}

/** `baton resume`: a run stopped by its maxSteps budget gets as many attempts again and goes on. */
export function resumeRun(run: RunState, now: number): Transition {
  if (!isBudgetBlock(run)) {
    throw new BatonError(
      'INVALID_TRANSITION',
      `run ${run.id} is ${run.status}${run.blockedReason ? ` (${run.blockedReason})` : ''}: only a run stopped by its budget can be resumed; for a blocked step use baton retry or baton skip`,
    );
  }
  const maxSteps = run.attemptsTotal + run.plan.limits.maxSteps;
  const plan: Plan = { ...run.plan, limits: { ...run.plan.limits, maxSteps } };
  const draft = new Draft({ ...run, plan, status: 'running', blockedReason: null }, now);
  draft.events.push({ type: 'run.resumed', reason: `budget raised to maxSteps ${maxSteps}` });
  return { ...draft.finish(), planChanged: true };
}
