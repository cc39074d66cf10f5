import { addUsage } from './budget.js';
import { closingStatus, startCleanup } from './cleanup.js';
import { BatonError } from './errors.js';
import type { BatonEvent } from './events.js';
import type { StepUsage } from './failure.js';
import { settleChangedGroups } from './for-each.js';
import { firstDueAt } from './not-before.js';
import type { Plan, PlanStep } from './plan/types.js';
import {
  countStep,
  FINAL_RUN_STATUSES,
  FINAL_STEP_STATUSES,
  forgetTally,
  planIndex,
  type RunState,
  type RunStatus,
  rememberTally,
  SATISFIED_STEP_STATUSES,
  type StepState,
  type StepTally,
  stepOf,
  stepTally,
} from './run-state.js';
import { decideWhen, settleUnrunStep } from './when-condition.js';

/**
 * The run/step state machine as pure functions of (state, event, now). Each returns the new run
 * state, the ids of the steps it changed and the events to append; the store writes all three in
 * one transaction.
 */
export interface Transition {
  run: RunState;
  changedSteps: string[];
  events: BatonEvent[];
  /** Set when the plan snapshot itself changed (approval with a delay; a fan-out's expansion). */
  planChanged?: boolean;
  /** Steps the transition added to the plan (a fan-out's items): their rows are inserted. */
  addedSteps?: string[];
  /** Steps whose recorded effects (`ctx.effect`) are forgotten with it: a rerun with `redoEffects`. */
  clearEffects?: string[];
}

export function planStep(plan: Plan, stepId: string): PlanStep {
  const position = planIndex(plan).position.get(stepId);
  const step = position === undefined ? undefined : plan.steps[position];
  if (!step)
    throw new BatonError(
      'STEP_NOT_FOUND',
      `unknown step "${stepId}" (known: ${plan.steps.map((s) => s.id).join(', ')})`,
    );
  return step;
}

export function stepState(run: RunState, stepId: string): StepState {
  const state = stepOf(run, stepId);
  if (!state) {
    throw new BatonError(
      'STEP_NOT_FOUND',
      `run ${run.id} has no step "${stepId}" (known: ${run.steps.map((s) => s.stepId).join(', ')})`,
    );
  }
  return state;
}

/** A builder that collects step changes and events, then settles the run status once. */
export class Draft {
  readonly steps: StepState[];
  /** The steps as the draft found them: its tally is the base of the new one. */
  private readonly base: readonly StepState[];
  readonly changed = new Set<string>();
  /** Steps appended to the plan by this draft (appendSteps); null: none (every transition but a fan-out's). */
  private added: string[] | null = null;
  readonly events: BatonEvent[] = [];
  run: RunState;

  constructor(
    run: RunState,
    readonly now: number,
  ) {
    this.run = run;
    this.base = run.steps;
    this.steps = [...run.steps];
  }

  /** Appends steps (a fan-out's items) to the plan snapshot, `plan` being the old one with them at its end. */
  appendSteps(plan: Plan, states: readonly StepState[]): void {
    forgetTally(this.steps);
    this.run = { ...this.run, plan };
    this.added ??= [];
    for (const state of states) {
      this.steps.push(state);
      this.changed.add(state.stepId);
      this.added.push(state.stepId);
    }
  }

  setStep(stepId: string, patch: Partial<StepState>): StepState {
    const position = planIndex(this.run.plan).position.get(stepId)!;
    const next = { ...this.steps[position]!, ...patch, updatedAt: this.now };
    // A tally taken by an earlier finish() no longer holds.
    forgetTally(this.steps);
    this.steps[position] = next;
    this.changed.add(stepId);
    return next;
  }

  /**
   * Tokens an attempt of `stepId` spent count against the step's budget and the run's, whatever
   * became of its outcome (committed or discarded). Accounting, not a change of the step's state:
   * its `updatedAt` (a blocked step's `blockedAt`) stays.
   */
  addUsage(stepId: string, usage: StepUsage): void {
    const position = planIndex(this.run.plan).position.get(stepId)!;
    this.run = { ...this.run, usage: addUsage(this.run.usage, usage) };
    const step = this.steps[position]!;
    this.steps[position] = { ...step, usage: addUsage(step.usage, usage) };
    this.changed.add(stepId);
  }

  /**
   * Dependents of `stepId` whose dependencies are all satisfied become ready after their delay, once
   * their `when` (if any) says so; one it says no to is skipped and releases its own dependents in
   * turn (a work list, not recursion: a long chain of skips cannot overflow the stack).
   */
  releaseDependents(stepId: string): void {
    const { position, dependents } = planIndex(this.run.plan);
    const settled = [stepId];
    for (let next = settled.pop(); next !== undefined; next = settled.pop()) {
      for (const dependentId of dependents.get(next) ?? []) {
        const step = this.run.plan.steps[position.get(dependentId)!]!;
        if (this.get(step.id).status !== 'pending') continue;
        if (!step.dependsOn.every((dep) => SATISFIED_STEP_STATUSES.has(this.get(dep).status))) continue;
        const decision =
          step.when === undefined
            ? null
            : decideWhen({ plan: this.run.plan, steps: this.steps }, step, this.run.inputs ?? {});
        if (decision === null || decision.run) {
          this.setStep(step.id, { status: 'ready', dueAt: firstDueAt(this.reads(), step, this.now) });
        } else if (settleUnrunStep(this, step.id, decision)) {
          settled.push(step.id);
        }
      }
    }
  }

  /** The run as a step's templates read it: its inputs and the draft's steps (their results so far). */
  reads(): Pick<RunState, 'id' | 'inputs'> & { steps: readonly StepState[] } {
    return { id: this.run.id, inputs: this.run.inputs, steps: this.steps };
  }

  get(stepId: string): StepState {
    return this.steps[planIndex(this.run.plan).position.get(stepId)!]!;
  }

  finish(): Transition {
    settleChangedGroups(this);
    const before = this.run.status;
    let status: RunStatus = before;
    let blockedReason = this.run.blockedReason;
    if (!FINAL_RUN_STATUSES.has(before) && before !== 'awaiting_approval' && !isBudgetBlock(this.run)) {
      status = statusOfTally(this.tally());
      // A run that ends runs its cleanup first (core/cleanup.ts): finally steps once it succeeded,
      // compensations and finally steps once a blocked step gives it up.
      if (this.run.plan.closing === undefined) {
        if (status === 'succeeded' && this.run.plan.finally !== undefined) {
          startCleanup(this, 'succeeded', { compensate: false });
        } else if (status === 'blocked' && this.run.plan.onFailure === 'compensate') {
          giveUp(this);
        }
      }
      if (this.run.plan.closing !== undefined) status = closingStatus(this.run.plan, this.steps);
      blockedReason = status === 'blocked' ? describeBlockedSteps(this.steps) : null;
      if (status !== before || (status === 'blocked' && blockedReason !== this.run.blockedReason)) {
        if (status === 'succeeded') this.events.push({ type: 'run.succeeded' });
        if (status === 'blocked') this.events.push({ type: 'run.blocked', reason: blockedReason ?? '' });
        if (status === 'cancelled') this.events.push({ type: 'run.cancelled' });
        if (status === 'failed')
          this.events.push({ type: 'run.failed', reason: this.run.plan.closing?.reason ?? 'given up' });
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
    const transition: Transition = { run, changedSteps: [...this.changed], events: this.events };
    return this.added === null ? transition : { ...transition, planChanged: true, addedSteps: this.added };
  }

  /** The tally of the draft's steps: the base's, with each changed step moved, not a count of all. */
  private tally(): StepTally {
    const tally = { ...stepTally(this.base) };
    const { position } = planIndex(this.run.plan);
    for (const stepId of this.changed) {
      const index = position.get(stepId)!;
      // A step this draft appended was not in the base.
      if (index < this.base.length) countStep(tally, this.base[index]!.status, -1);
      countStep(tally, this.steps[index]!.status, 1);
    }
    rememberTally(this.steps, tally);
    return tally;
  }
}

export function isBudgetBlock(run: RunState): boolean {
  return run.status === 'blocked' && (run.blockedReason?.startsWith('budget:') ?? false);
}

/** running while anything can still happen; succeeded when every step is satisfied; else blocked. */
export function deriveRunStatus(steps: readonly StepState[]): RunStatus {
  return statusOfTally(stepTally(steps));
}

function statusOfTally(tally: StepTally): RunStatus {
  if (tally.unsatisfied === 0) return 'succeeded';
  if (tally.active > 0) return 'running';
  return tally.blocked > 0 ? 'blocked' : 'running';
}

/**
 * `onFailure: compensate`: a step blocked for good gives the run up. Every step not done yet is
 * cancelled (a running one keeps its lease until its worker stops it), the completed ones are
 * compensated and `finally:` runs; the run then ends `failed`, naming the blocked steps.
 */
function giveUp(draft: Draft): void {
  const reason = describeBlockedSteps(draft.steps);
  cancelUnfinishedSteps(draft);
  startCleanup(draft, 'failed', { compensate: true, reason, always: true });
}

/**
 * Every step not done yet is cancelled (a cancel, a run given up). A running one keeps its lease
 * (owner and expiry): its process stops at the owner's next renewal, and flow control counts it
 * until the owner reports the attempt ended or the lease runs out.
 */
export function cancelUnfinishedSteps(draft: Draft): void {
  for (const step of [...draft.steps]) {
    if (FINAL_STEP_STATUSES.has(step.status)) continue;
    const running = step.status === 'running';
    draft.setStep(step.stepId, {
      status: 'cancelled',
      dueAt: null,
      leaseOwner: running ? step.leaseOwner : null,
      leaseExpiresAt: running ? step.leaseExpiresAt : null,
    });
    draft.events.push({ type: 'step.cancelled', stepId: step.stepId });
  }
}

function describeBlockedSteps(steps: readonly StepState[]): string {
  return steps
    .filter((step) => step.status === 'blocked')
    .map((step) => `step ${step.stepId}: ${step.blockedReason ?? 'blocked'}`)
    .join('; ');
}
