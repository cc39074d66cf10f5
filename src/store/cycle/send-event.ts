import '../core-libraries.js';
import { BatonError, runNotFound } from '../../core/errors.js';
import type { PlanStep } from '../../core/plan/types.js';
import { FINAL_RUN_STATUSES, FINAL_STEP_STATUSES, type RunState } from '../../core/run-state.js';
import type { Transition } from '../../core/transitions.js';
import { receiveWaitEvent } from '../../core/waits.js';
import type { EventDelivery, SentEvent } from '../contract/events.js';

export type { EventDelivery, SentEvent } from '../contract/events.js';

/** The step of `run` waiting for `event` now, or null (in plan order: the first such step). */
function stepWaitingFor(run: RunState, event: string): string | null {
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
function eventForRun(run: RunState, sent: SentEvent, now: number): Transition | 'keep' {
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
function storedPayload(run: RunState, sent: SentEvent): string {
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
function checkBeforeSending(runs: readonly RunState[], sent: SentEvent): void {
  if (!sent.checkPayload) return;
  for (const run of runs) {
    const stepId = stepWaitingFor(run, sent.event);
    if (stepId) sent.checkPayload(planStepOf(run, stepId), run.id);
  }
}

function planStepOf(run: RunState, stepId: string): PlanStep {
  return run.plan.steps.find((step) => step.id === stepId)!;
}

/** What a sent event does in one run, decided in the run's transaction: nothing, kept for it, or taken by a step. */
export type EventAction =
  | { kind: 'none' }
  | { kind: 'keep'; event: string; dataJson: string; at: number }
  | { kind: 'receive'; stepId: string; transition: Transition; at: number };

/**
 * What `baton send` asks of a dialect: find the runs, and hold one run at a time in a transaction of
 * its own under its write lock (SQLite's BEGIN IMMEDIATE, PostgreSQL's row lock, the lock a cycle
 * takes before a step starts waiting and takes a kept event) to write what `sendEventToRuns` decided.
 */
export interface EventRuns {
  /** The runs with a step waiting for `event` now, in id order (the partial index steps_waiting_for). */
  waitingFor(event: string): Promise<string[]>;
  /** These runs as stored (unknown ones left out): the payload is checked against each before anything is written. */
  load(runIds: readonly string[]): Promise<RunState[]>;
  /**
   * In one transaction holding the run: `decide` is given the run as stored (null: none) and its
   * answer is written, the kept event or the transition. Resolves with that answer, and whether a
   * `keep` kept the event (false: one of that name was kept for the run already).
   */
  inRun(
    runId: string,
    decide: (run: RunState | null) => EventAction,
  ): Promise<{ action: EventAction; kept: boolean }>;
}

/**
 * `Store.sendEvent`, once for both dialects: each run in its own transaction, so a step takes the
 * event, or the event is kept for it, exactly once under races; a send without a run checks the
 * payload against every run it reaches before any is written, and skips a run whose step stopped
 * waiting meanwhile.
 */
export async function sendEventToRuns(
  runs: EventRuns,
  sent: SentEvent,
  now: number,
): Promise<EventDelivery[]> {
  const runIds = sent.runId !== undefined ? [sent.runId] : await runs.waitingFor(sent.event);
  if (sent.runId === undefined && runIds.length > 0) checkBeforeSending(await runs.load(runIds), sent);
  const deliveries: EventDelivery[] = [];
  for (const runId of runIds) {
    const { action, kept } = await runs.inRun(runId, (run) => eventAction(runId, run, sent, now));
    if (action.kind === 'keep') deliveries.push({ runId, stepId: null, outcome: kept ? 'kept' : 'dropped' });
    else if (action.kind === 'receive')
      deliveries.push({ runId, stepId: action.stepId, outcome: 'received' });
  }
  if (deliveries.length === 0) throw noRunWaitsFor(sent.event);
  return deliveries;
}

const NO_ACTION: EventAction = { kind: 'none' };

/** What the event does in `run` as its transaction holds it (null: no such run). */
function eventAction(runId: string, run: RunState | null, sent: SentEvent, now: number): EventAction {
  if (!run) {
    if (sent.runId !== undefined) throw runNotFound(runId);
    return NO_ACTION;
  }
  const stepId = stepWaitingFor(run, sent.event);
  // Sent without a run: only runs whose step still waits (another send may have ended it).
  if (sent.runId === undefined && stepId === null) return NO_ACTION;
  const change = eventForRun(run, sent, now);
  if (change === 'keep')
    return { kind: 'keep', event: sent.event, dataJson: storedPayload(run, sent), at: now };
  return { kind: 'receive', stepId: stepId!, transition: change, at: now };
}

/** The answer when a send without a run found no run waiting. */
function noRunWaitsFor(event: string): BatonError {
  return new BatonError(
    'INVALID_TRANSITION',
    `no run waits for event "${event}" now; to keep it for a run whose step will wait for it: baton send ${event} --run <run>`,
  );
}
