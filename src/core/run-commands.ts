import { budgetBreach } from './budget.js';
import { startCleanup } from './cleanup.js';
import { cancelUnfinishedSteps, Draft, isBudgetBlock, stepState, type Transition } from './draft.js';
import { BatonError } from './errors.js';
import type { FailureClass } from './failure.js';
import { firstDueAt } from './not-before.js';
import type { Plan } from './plan/types.js';
import { FINAL_RUN_STATUSES, type RunState } from './run-state.js';

/**
 * `baton retry --blocked`: several blocked steps of one run retried at once, as one transition
 * (each as `retryStep` would retry it). Each must still be blocked (with `failureClass`, when
 * given) as it was when listed: one that moved on meanwhile refuses the run's change.
 */
export function retrySteps(
  run: RunState,
  stepIds: readonly string[],
  now: number,
  failureClass?: FailureClass,
): Transition {
  let current = run;
  const events: Transition['events'] = [];
  const changed = new Set<string>();
  for (const stepId of stepIds) {
    const step = stepState(current, stepId);
    if (step.status !== 'blocked')
      throw new BatonError(
        'INVALID_TRANSITION',
        `step ${stepId} is ${step.status} now: it moved on since it was listed`,
      );
    if (failureClass !== undefined && step.lastFailureClass !== failureClass)
      throw new BatonError(
        'INVALID_TRANSITION',
        `step ${stepId} is blocked as ${step.lastFailureClass ?? 'unclassified'} now, not ${failureClass}: it moved on since it was listed`,
      );
    const transition = retryStep(current, stepId, now);
    current = transition.run;
    events.push(...transition.events);
    for (const id of transition.changedSteps) changed.add(id);
  }
  return { run: current, events, changedSteps: [...changed] };
}

/** `baton retry`: a blocked or waiting step becomes due now with fresh tries. */
export function retryStep(run: RunState, stepId: string, now: number): Transition {
  const step = stepState(run, stepId);
  if (FINAL_RUN_STATUSES.has(run.status)) {
    throw new BatonError('INVALID_TRANSITION', `run ${run.id} is ${run.status}: its steps cannot be retried`);
  }
  if (isBudgetBlock(run)) {
    throw new BatonError(
      'INVALID_TRANSITION',
      `run ${run.id} is stopped by its budget (${run.blockedReason}); give it more attempts first: baton resume ${run.id}`,
    );
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
    interruptions: 0,
    fingerprint: null,
    fingerprintRepeats: 0,
    blockedReason: null,
    // A human retry tries the step's own executor again, not its fallback.
    onFallback: false,
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
  if (!['pending', 'ready', 'retry_wait', 'waiting', 'blocked'].includes(step.status)) {
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

/**
 * `baton resolve`: a human supplies the outcome of a blocked step (typically an unknown outcome
 * after a crash mid-effect); the step succeeds with that result and its dependents may start.
 */
export function resolveStep(run: RunState, stepId: string, resultJson: string, now: number): Transition {
  const step = stepState(run, stepId);
  if (FINAL_RUN_STATUSES.has(run.status)) {
    throw new BatonError(
      'INVALID_TRANSITION',
      `run ${run.id} is ${run.status}: its steps cannot be resolved`,
    );
  }
  if (step.status !== 'blocked' && step.status !== 'retry_wait') {
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${stepId} is ${step.status}: only a blocked or retry_wait step can be resolved`,
    );
  }
  const draft = new Draft(run, now);
  draft.setStep(stepId, {
    status: 'succeeded',
    dueAt: null,
    resultJson,
    blockedReason: null,
    lastError: null,
    lastFailureClass: null,
  });
  draft.events.push({ type: 'step.resolved', stepId });
  draft.releaseDependents(stepId);
  if (run.status === 'blocked' && !isBudgetBlock(run))
    draft.events.push({ type: 'run.resumed', reason: `resolve of step ${stepId}` });
  return draft.finish();
}

/** What `baton cancel` does beyond ending the run. */
export interface CancelOptions {
  /**
   * Run the `compensate:` of every completed step (`cancel --compensate`); absent: as the plan's
   * `onFailure` says (compensate, or not). `finally:` steps run either way.
   */
  compensate?: boolean;
  /** Run no cleanup at all (a proposed run rejected: nothing ran). */
  cleanup?: false;
}

/**
 * `baton cancel`: the run and every unfinished step end; a running attempt's outcome will be
 * discarded. A running step keeps its lease (owner and expiry): its process stops at the owner's
 * next renewal, and flow control counts it until the owner reports the attempt ended
 * (`settleReport`, core/settle-report.ts) or the lease runs out. A run with cleanup to do
 * (compensations, `finally:`) runs it first and is `cancelled` once it is done (core/cleanup.ts);
 * a run cancelled while it cleans up ends at once, its cleanup cancelled too.
 */
export function cancelRun(run: RunState, now: number, options: CancelOptions = {}): Transition {
  if (FINAL_RUN_STATUSES.has(run.status)) {
    throw new BatonError('INVALID_TRANSITION', `run ${run.id} is already ${run.status}`);
  }
  // A proposed run never started: nothing to undo, nothing to finish.
  const cleaning =
    options.cleanup !== false && run.plan.closing === undefined && run.status !== 'awaiting_approval';
  const draft = new Draft(cleaning ? { ...run, status: 'running', blockedReason: null } : run, now);
  cancelUnfinishedSteps(draft);
  const compensate = options.compensate ?? run.plan.onFailure === 'compensate';
  if (cleaning && startCleanup(draft, 'cancelled', { compensate }) > 0) return draft.finish();
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
    if (draft.get(step.id).status === 'ready')
      draft.setStep(step.id, { dueAt: firstDueAt(draft.reads(), step, now) });
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
  const cancelled = cancelRun({ ...run, status: 'running' }, now, { cleanup: false });
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
  const limits = { ...run.plan.limits, maxSteps: run.attemptsTotal + run.plan.limits.maxSteps };
  const raised = [`maxSteps ${limits.maxSteps}`];
  // Every other budget the run reached gets as much again, counted from what it has used.
  for (let breach = budgetBreach(limits, run.usage, run.createdAt, now); breach; ) {
    limits[breach.limit] = breach.value + breach.max;
    raised.push(`${breach.limit} ${limits[breach.limit]}`);
    breach = budgetBreach(limits, run.usage, run.createdAt, now);
  }
  const plan: Plan = { ...run.plan, limits };
  const draft = new Draft({ ...run, plan, status: 'running', blockedReason: null }, now);
  draft.events.push({ type: 'run.resumed', reason: `budget raised to ${raised.join(', ')}` });
  return { ...draft.finish(), planChanged: true };
}
