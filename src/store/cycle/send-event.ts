import '../core-libraries.js';
import { BatonError } from '../../core/errors.js';
import type { PlanStep } from '../../core/plan/types.js';
import { FINAL_RUN_STATUSES, FINAL_STEP_STATUSES, type RunState } from '../../core/run-state.js';
import type { Transition } from '../../core/transitions.js';
import { receiveWaitEvent } from '../../core/waits.js';
import type { SentEvent } from '../contract/events.js';

export type { EventDelivery, SentEvent } from '../contract/events.js';

/** The step of `run` waiting for `event` now, or null (in plan order: the first such step). */
export function stepWaitingFor(run: RunState, event: string): string | null {
  for (const [position, step] of run.steps.entries()) {
    if (
      step.status === 'waiting' &&
      step.waitingFor === event &&
      run.plan.steps[position]!.wait?.for === 'event'
    )
      return step.stepId;
  }
  return null;
}

/**
 * What an event sent to `run` does, decided once for both stores inside their transaction: the
 * transition that ends its waiting step, or `keep` (no step waits for it yet: the dialect keeps it,
 * the first per (run, event) winning). Throws for a finished run, or one with no step that could
 * ever wait for the event.
 */
export function eventForRun(run: RunState, sent: SentEvent, now: number): Transition | 'keep' {
  if (FINAL_RUN_STATUSES.has(run.status))
    throw new BatonError(
      'INVALID_TRANSITION',
      `run ${run.id} is ${run.status}: no step of it waits for events`,
    );
  const stepId = stepWaitingFor(run, sent.event);
  for (const step of stepsTaking(run, sent.event, stepId)) sent.checkPayload?.(step, run.id);
  if (stepId) return receiveWaitEvent(run, stepId, sent.event, storedPayload(run, sent), now);
  const names = run.plan.steps.flatMap((step) => (step.wait?.for === 'event' ? [step.wait.event ?? ''] : []));
  // Only a step that has not ended may still wait: an event for one that took its event already is refused.
  if (stepsTaking(run, sent.event, null).length === 0)
    throw new BatonError(
      'INVALID_TRANSITION',
      names.length === 0
        ? `run ${run.id} has no step that waits for an event: nothing would take "${sent.event}"`
        : `no step of run ${run.id} waits for event "${sent.event}" (its events: ${names.join(', ')})`,
    );
  return 'keep';
}

/** The payload as stored for `run` (see SentEvent.maskPayload): what a kept event holds too. */
export function storedPayload(run: RunState, sent: SentEvent): string {
  return sent.maskPayload ? sent.maskPayload(run.plan) : sent.dataJson;
}

/** The steps an event sent now could end: the one waiting for it, else those that may wait for it later. */
function stepsTaking(run: RunState, event: string, waiting: string | null): PlanStep[] {
  if (waiting) return run.plan.steps.filter((step) => step.id === waiting);
  return run.plan.steps.filter(
    (step, position) =>
      step.wait?.for === 'event' &&
      !FINAL_STEP_STATUSES.has(run.steps[position]!.status) &&
      (step.wait.event === event || (step.wait.event ?? '').includes('{{')),
  );
}

/** Checks the payload against every run a send without a run reaches, before any is written. */
export function checkBeforeSending(runs: readonly RunState[], sent: SentEvent): void {
  if (!sent.checkPayload) return;
  for (const run of runs) {
    const stepId = stepWaitingFor(run, sent.event);
    if (stepId) sent.checkPayload(planStepOf(run, stepId), run.id);
  }
}

function planStepOf(run: RunState, stepId: string): PlanStep {
  return run.plan.steps.find((step) => step.id === stepId)!;
}

/** The answer when a send without a run found no run waiting. */
export function noRunWaitsFor(event: string): BatonError {
  return new BatonError(
    'INVALID_TRANSITION',
    `no run waits for event "${event}" now; to keep it for a run whose step will wait for it: baton send ${event} --run <run>`,
  );
}
