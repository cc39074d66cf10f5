import { isBatonError } from '../core/errors.js';
import type { StoredEvent } from '../core/events.js';
import type { Plan } from '../core/plan/types.js';
import { redactValue } from '../core/redact.js';
import { eventDataJson, payloadCheck } from '../runtime/wait-inputs.js';
import type { RunDetail, Store } from '../store/store.js';

/**
 * Answers to a waiting step, as the console gives them (the inbox's forms, the capability URLs):
 * the same Store methods `baton approve|reject|send` call, one transaction each.
 */

/** The wait a step is in now: its declared kind, what it waits for and the seq of its `step.waiting`. */
export interface CurrentWait {
  kind: 'approval' | 'event';
  waitingFor: string;
  waitSeq: number;
}

/** The wait `stepId` of `run` is in now, or null when it does not wait. */
export async function currentWait(store: Store, run: RunDetail, stepId: string): Promise<CurrentWait | null> {
  const position = run.steps.findIndex((s) => s.stepId === stepId);
  const step = run.steps[position];
  const declared = run.plan.steps[position];
  if (!step || step.status !== 'waiting' || !declared?.wait) return null;
  const events = await store.getEvents(run.id);
  const started = events.findLast(
    (e): e is Extract<StoredEvent, { type: 'step.waiting' }> =>
      e.type === 'step.waiting' && e.stepId === stepId,
  );
  if (!started) return null;
  return { kind: declared.wait.for, waitingFor: step.waitingFor ?? started.waitingFor, waitSeq: started.seq };
}

/** Approves or rejects a waiting approval: the CLI's own decision (runtime/run-actions.ts). */
export { decideWait } from '../runtime/run-actions.js';

/**
 * Delivers `event` with its payload (JSON text, checked against the step's `wait.schema`) to the
 * run's step waiting for it; the payload is stored with the run's secrets masked.
 */
export async function sendWaitEvent(
  store: Store,
  runId: string,
  event: string,
  payloadText: string,
  secretsOf: (plan: Plan) => readonly string[],
  now: number,
) {
  const dataJson = eventDataJson(payloadText.trim() === '' ? 'null' : payloadText, 'payload');
  const value = JSON.parse(dataJson) as unknown;
  return store.sendEvent(
    {
      event,
      dataJson,
      runId,
      checkPayload: payloadCheck(dataJson),
      maskPayload: (plan) => JSON.stringify(redactValue(value, secretsOf(plan))),
    },
    now,
  );
}

/** Whether a store refusal means the wait is over (someone answered first): it reads as used. */
export function waitIsOver(error: unknown): boolean {
  return isBatonError(error) && (error.code === 'INVALID_TRANSITION' || error.code === 'STEP_NOT_FOUND');
}
