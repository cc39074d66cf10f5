import { withinCheckHorizon } from './check-horizon.js';
import { Draft, isBudgetBlock, planStep, stepState, type Transition } from './draft.js';
import { BatonError } from './errors.js';
import { renderTemplate } from './plan/template.js';
import type { PlanStep, WaitSpec } from './plan/types.js';
import { FINAL_RUN_STATUSES, planIndex, type RunState, type StepResult, stepOf } from './run-state.js';
import { waitCommands } from './wait-commands.js';

/**
 * Wait steps: a step with `wait` and no body becomes `waiting` when due, holding no lease and no
 * process. Its timeout is its `dueAt`, so the stores' due machinery fires it (a due waiting step is
 * a timeout); nothing is polled per waiting step. Approvals, rejections and events end it; all of
 * it is pure transitions the stores apply in one transaction each.
 */

/** What a wait's texts are rendered with, beside the run's results. */
export interface WaitRenderContext {
  inputs: Record<string, string>;
  workspace: string;
}

/** An event sent to a run before its step waited, kept by the store until the step takes it. */
export interface KeptEvent {
  /** The payload as JSON text (masked when it was sent). */
  dataJson: string;
  at: number;
}

/** Who decided and why, for `baton approve` / `baton reject`. */
export interface WaitDecision {
  by: string;
  comment?: string | null;
}

/** The `wait` of a plan step, or a BatonError naming the step. */
export function waitOf(step: PlanStep): WaitSpec {
  if (step.kind !== 'wait' || !step.wait)
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${step.id} is not a wait step: it has nothing to approve or send`,
    );
  return step.wait;
}

/**
 * Whether the wait step at `position` is due for its next move: starting to wait (its run running),
 * or timing out. A timeout fires in a blocked run too (another step is blocked, or a budget stopped
 * it): the wait's deadline does not move because something else needs a person. A check (`dueBy`)
 * leaves a timeout that came after its start to the next check (core/check-horizon.ts).
 */
export function waitStepDue(
  run: RunState,
  position: number,
  scope: { now: number; runId?: string; dueBy?: number },
): boolean {
  const step = run.steps[position];
  if (
    run.plan.steps[position]?.kind !== 'wait' ||
    step === undefined ||
    step.dueAt === null ||
    step.dueAt > scope.now ||
    !withinCheckHorizon(step, scope.dueBy) ||
    (scope.runId !== undefined && scope.runId !== run.id)
  )
    return false;
  if (step.status === 'waiting') return run.status === 'running' || run.status === 'blocked';
  return step.status === 'ready' && run.status === 'running';
}

const waitPositionsByPlan = new WeakMap<RunState['plan'], readonly number[]>();

/** The positions of a plan's wait steps (cached per plan: most plans have none). */
export function waitPositions(plan: RunState['plan']): readonly number[] {
  let positions = waitPositionsByPlan.get(plan);
  if (!positions) {
    positions = plan.steps.flatMap((step, position) => (step.kind === 'wait' ? [position] : []));
    waitPositionsByPlan.set(plan, positions);
  }
  return positions;
}

/**
 * The earliest due time of the run's wait steps (a ready one starting to wait, a waiting one's
 * timeout); null: none. Their moves hold no slot (waitStepDue reads no concurrency), so a store that
 * finds due work from run rows (PostgreSQL's runs.next_wait_at) looks at a run at its concurrency
 * for them.
 */
export function nextWaitAt(run: Pick<RunState, 'plan' | 'steps'>): number | null {
  let earliest: number | null = null;
  for (const position of waitPositions(run.plan)) {
    const step = run.steps[position];
    if (
      (step?.status === 'ready' || step?.status === 'waiting') &&
      step.dueAt !== null &&
      (earliest === null || step.dueAt < earliest)
    )
      earliest = step.dueAt;
  }
  return earliest;
}

/** The wait's prompt or event name, rendered from the run; a reference it cannot resolve stays as written. */
export function renderWaitText(run: RunState, step: PlanStep, context: WaitRenderContext): string {
  const wait = waitOf(step);
  const text = wait.for === 'event' ? (wait.event ?? '') : (wait.prompt ?? `Approve step ${step.id}?`);
  const steps: Record<string, { summary: string; outputs: string[] }> = {};
  for (const state of run.steps) {
    if (!state.resultJson) continue;
    const result = JSON.parse(state.resultJson) as StepResult;
    steps[state.stepId] = { summary: result.summary, outputs: result.outputs.map((o) => o.path) };
  }
  try {
    return renderTemplate(text, {
      run: { id: run.id, workspace: context.workspace },
      inputs: context.inputs,
      steps,
    });
  } catch {
    return text;
  }
}

/**
 * A due `ready` wait step starts waiting: its timeout becomes its `dueAt`. `kept`: an event sent to
 * the run before (the store takes it in the same transaction), which ends the wait at once.
 */
export function startWaiting(
  run: RunState,
  stepId: string,
  waitingFor: string,
  kept: KeptEvent | null,
  now: number,
): Transition {
  const step = stepState(run, stepId);
  const wait = waitOf(planStep(run.plan, stepId));
  if (step.status !== 'ready' || run.status !== 'running')
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${stepId} is ${step.status}: only a ready wait step starts waiting`,
    );
  const timeoutAt = wait.deadlineAt ?? (wait.timeoutMs === undefined ? null : now + wait.timeoutMs);
  const draft = new Draft(run, now);
  if (wait.for === 'approval' && run.plan.shadow === true && run.plan.shadowApprovals !== 'wait') {
    // A shadow run sends nothing: nobody is asked to approve what will not happen.
    draft.setStep(stepId, { startedAt: now, firstStartedAt: step.firstStartedAt ?? now });
    const decision = {
      by: 'shadow',
      comment: `shadow run (shadow.approvals: ${run.plan.shadowApprovals ?? 'approve'})`,
    };
    if (run.plan.shadowApprovals === 'reject') rejectOnDraft(draft, stepId, decision);
    else approveOnDraft(draft, stepId, decision);
    return draft.finish();
  }
  draft.setStep(stepId, {
    status: 'waiting',
    dueAt: timeoutAt,
    waitingFor,
    startedAt: now,
    firstStartedAt: step.firstStartedAt ?? now,
    blockedReason: null,
  });
  draft.events.push({ type: 'step.waiting', stepId, for: wait.for, waitingFor, timeoutAt });
  if (kept && wait.for === 'event') receiveOnDraft(draft, stepId, waitingFor, kept.dataJson, true);
  return draft.finish();
}

/** A waiting step whose timeout came (its `dueAt`): its `onTimeout` (block, skip or reject). */
export function timeOutWait(run: RunState, stepId: string, now: number): Transition {
  const step = stepState(run, stepId);
  const wait = waitOf(planStep(run.plan, stepId));
  if (step.status !== 'waiting' || step.dueAt === null || step.dueAt > now)
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${stepId} is ${step.status}: its wait has not timed out`,
    );
  const draft = new Draft(run, now);
  draft.events.push({ type: 'step.wait_timed_out', stepId, action: wait.onTimeout });
  const what = wait.for === 'event' ? `event "${step.waitingFor}"` : 'approval';
  if (wait.onTimeout === 'skip') {
    draft.setStep(stepId, { status: 'skipped', dueAt: null, blockedReason: null });
    draft.events.push({ type: 'step.skipped', stepId, reason: `timed out waiting for ${what}` });
    draft.releaseDependents(stepId);
  } else if (wait.onTimeout === 'reject') {
    rejectOnDraft(draft, stepId, { by: 'timeout', comment: `timed out waiting for ${what}` });
  } else {
    draft.setStep(stepId, {
      status: 'blocked',
      dueAt: null,
      blockedReason: `timed out waiting for ${what}; it may still be ended: ${waitCommands(run.id, stepId, wait, step.waitingFor).join(' | ')}`,
    });
  }
  return draft.finish();
}

/** `baton approve <run> <step>`: the waiting approval succeeds; the steps after it may start. */
export function approveWaitStep(
  run: RunState,
  stepId: string,
  decision: WaitDecision,
  now: number,
): Transition {
  const draft = decisionDraft(run, stepId, 'approval', now);
  approveOnDraft(draft, stepId, decision);
  return draft.finish();
}

function approveOnDraft(draft: Draft, stepId: string, decision: WaitDecision): void {
  const comment = decision.comment ?? null;
  const value = { approved: true, by: decision.by, comment, at: new Date(draft.now).toISOString() };
  draft.setStep(stepId, {
    status: 'succeeded',
    dueAt: null,
    blockedReason: null,
    resultJson: resultJson(`approved by ${decision.by}${comment ? `: ${comment}` : ''}`, value),
  });
  draft.events.push({ type: 'step.approved', stepId, by: decision.by, comment });
  draft.releaseDependents(stepId);
}

/**
 * `baton reject <run> <step>`: the approval ends `skipped` with its result `{ approved: false }`,
 * and the steps after it are skipped with the reason, unless they decide for themselves
 * (decidesAfterRejection).
 */
export function rejectWaitStep(
  run: RunState,
  stepId: string,
  decision: WaitDecision,
  now: number,
): Transition {
  const draft = decisionDraft(run, stepId, 'approval', now);
  rejectOnDraft(draft, stepId, decision);
  return draft.finish();
}

/** `baton send <event>` to a run whose step waits for it: the payload is the step's result. */
export function receiveWaitEvent(
  run: RunState,
  stepId: string,
  event: string,
  dataJson: string,
  now: number,
): Transition {
  const draft = decisionDraft(run, stepId, 'event', now);
  const waitingFor = stepState(run, stepId).waitingFor;
  if (waitingFor !== event)
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${stepId} of run ${run.id} waits for event "${waitingFor}", not "${event}"`,
    );
  receiveOnDraft(draft, stepId, event, dataJson, false);
  return draft.finish();
}

/**
 * Whether a step after a rejected approval decides for itself whether to run (a `when` condition,
 * added by another change): such a step is left to be released as usual, and its condition reads
 * the rejection (`approved: false`) from the approval's result; every other step after the
 * rejection is skipped.
 */
export function decidesAfterRejection(step: PlanStep): boolean {
  return step.when !== undefined;
}

/** A draft for a decision on a waiting step (or one blocked by its timeout) of this kind. */
function decisionDraft(run: RunState, stepId: string, kind: WaitSpec['for'], now: number): Draft {
  const step = stepState(run, stepId);
  const declared = planStep(run.plan, stepId);
  if (FINAL_RUN_STATUSES.has(run.status))
    throw new BatonError('INVALID_TRANSITION', `run ${run.id} is ${run.status}: its steps no longer wait`);
  const timedOut = step.status === 'blocked' && step.waitingFor !== undefined;
  if (declared.kind !== 'wait' || (step.status !== 'waiting' && !timedOut))
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${stepId} of run ${run.id} is ${step.status}${declared.kind === 'wait' ? '' : ` (a step of kind ${declared.kind}, not a wait step)`}: only a waiting step can be approved, rejected or sent an event`,
    );
  const wait = waitOf(declared);
  if (wait.for !== kind)
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${stepId} of run ${run.id} waits for ${wait.for === 'event' ? `event "${step.waitingFor}"` : 'an approval'}: use ${waitCommands(run.id, stepId, wait, step.waitingFor)[0]}`,
    );
  const draft = new Draft(run, now);
  if (run.status === 'blocked' && !isBudgetBlock(run))
    draft.events.push({ type: 'run.resumed', reason: `${kind} of step ${stepId}` });
  return draft;
}

function receiveOnDraft(draft: Draft, stepId: string, event: string, dataJson: string, kept: boolean): void {
  draft.setStep(stepId, {
    status: 'succeeded',
    dueAt: null,
    blockedReason: null,
    resultJson: resultJson(`event ${event} received`, JSON.parse(dataJson) as unknown),
  });
  draft.events.push({ type: 'event.received', stepId, event, kept });
  draft.releaseDependents(stepId);
}

function rejectOnDraft(draft: Draft, stepId: string, decision: WaitDecision): void {
  const comment = decision.comment ?? null;
  const value = { approved: false, by: decision.by, comment, at: new Date(draft.now).toISOString() };
  const summary = `rejected by ${decision.by}${comment ? `: ${comment}` : ''}`;
  draft.setStep(stepId, {
    status: 'skipped',
    dueAt: null,
    blockedReason: null,
    resultJson: resultJson(summary, value),
  });
  draft.events.push({ type: 'step.rejected', stepId, by: decision.by, comment });
  skipAfterRejection(draft, stepId, `step ${stepId} was ${summary}`);
}

/** Skips every step after a rejection that does not decide for itself, then releases those that do. */
function skipAfterRejection(draft: Draft, rejected: string, reason: string): void {
  const { dependents, position } = planIndex(draft.run.plan);
  const released = [rejected];
  const queue = [rejected];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const dependentId of dependents.get(next) ?? []) {
      const declared = draft.run.plan.steps[position.get(dependentId)!]!;
      const state = stepOf(draft.run, dependentId) && draft.get(dependentId);
      if (!state || state.status !== 'pending' || decidesAfterRejection(declared)) continue;
      draft.setStep(dependentId, { status: 'skipped', dueAt: null, blockedReason: reason });
      draft.events.push({ type: 'step.skipped', stepId: dependentId, reason });
      released.push(dependentId);
      queue.push(dependentId);
    }
  }
  for (const stepId of released) draft.releaseDependents(stepId);
}

function resultJson(summary: string, value: unknown): string {
  const result: StepResult = { summary, outputs: [], value };
  return JSON.stringify(result);
}
