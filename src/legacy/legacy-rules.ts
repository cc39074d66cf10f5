import { troubleshootPrompt } from '../core/agent-prompt.js';
import type { LegacyState, LegacyStepRun } from './state-file.js';

/** What the skill's check does next with a state, as a pure decision of (state, now, config). */
export type LegacyAction =
  /** status DONE: nothing to do. */
  | { kind: 'idle' }
  /** Every step is DONE and the cursor is past the end: mark the state DONE (the skill does it on the next check). */
  | { kind: 'finish' }
  /** The current step is DONE: move the cursor. */
  | { kind: 'advance' }
  /** The current step used its tries (or interruptions): record the step id in `blockers` once, then stop. */
  | { kind: 'block'; stepId: string; alreadyListed: boolean; reason: string }
  /** A delay (stepDelayMinutes) is running: a durable timer, checked again by the next heartbeat. */
  | { kind: 'wait'; stepId: string; until: number }
  /** `tries`: the tries that count so far (this one is `tries + 1`); `interruptions` to record with it. */
  | { kind: 'run'; stepId: string; prompt: string; tries: number; interruptions: number };

/** STEP_MAX_RETRIES and STEP_MAX_INTERRUPTIONS. */
export interface LegacyLimits {
  maxRetries: number;
  maxInterruptions: number;
}

export function stepRunOf(state: LegacyState, stepId: string): LegacyStepRun {
  return state.stepRuns[stepId] ?? { status: 'PENDING', tries: 0 };
}

function isoMs(iso: string | undefined): number | null {
  if (iso === undefined) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * @param reachedEndNow the cursor reached the end during this check: the skill leaves `status`
 *   IN_PROGRESS until the following check, and so does Baton.
 */
export function nextLegacyAction(
  state: LegacyState,
  now: number,
  limits: LegacyLimits,
  reachedEndNow: boolean,
): LegacyAction {
  if (state.status === 'DONE') return { kind: 'idle' };
  const index = state.currentStep;
  if (index >= state.stepQueue.length) return reachedEndNow ? { kind: 'idle' } : { kind: 'finish' };
  const stepId = state.stepQueue[index]!;
  const run = stepRunOf(state, stepId);
  if (run.status === 'DONE') return { kind: 'advance' };
  // IN_PROGRESS here means the check that ran the step died before it finished: that try was
  // interrupted, not failed. It gives its try back and counts against STEP_MAX_INTERRUPTIONS.
  const interrupted = run.status === 'IN_PROGRESS';
  const interruptions = (run.interruptions ?? 0) + (interrupted ? 1 : 0);
  const tries = interrupted ? Math.max(0, run.tries - 1) : run.tries;
  const alreadyListed = state.blockers.includes(stepId);
  if (interrupted && interruptions > limits.maxInterruptions) {
    const reason = `interrupted ${interruptions} times (STEP_MAX_INTERRUPTIONS ${limits.maxInterruptions})`;
    return { kind: 'block', stepId, alreadyListed, reason };
  }
  if ((interrupted || run.status === 'FAILED') && tries >= limits.maxRetries) {
    const reason = `failed ${tries} tries; last error: ${run.error ?? '-'}`;
    return { kind: 'block', stepId, alreadyListed, reason };
  }
  const delayMs = state.stepDelayMinutes * 60_000;
  if (delayMs > 0) {
    // A retry waits after this step's last run; a first try waits after the previous step finished.
    const previous = index > 0 ? state.stepRuns[state.stepQueue[index - 1]!] : undefined;
    const since = run.tries > 0 ? isoMs(run.lastRunIso) : isoMs(previous?.lastRunIso);
    if (since !== null && now < since + delayMs) return { kind: 'wait', stepId, until: since + delayMs };
  }
  const instruction = state.plan.steps[stepId]!.instruction;
  const error =
    run.status === 'IN_PROGRESS' ? 'interrupted before it finished (the previous check stopped)' : run.error;
  const prompt = tries > 0 && error ? troubleshootPrompt(stepId, tries, error, instruction) : instruction;
  return { kind: 'run', stepId, prompt, tries, interruptions };
}
