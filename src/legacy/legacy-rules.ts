import { troubleshootPrompt } from '../core/agent-prompt.js';
import type { LegacyState, LegacyStepRun } from './state-file.js';

/** What the skill's check does next with a state, as a pure decision of (state, now, config). */
type LegacyAction =
  /** status DONE: nothing to do. */
  | { kind: 'idle' }
  /** Every step is DONE and the cursor is past the end: mark the state DONE (in the same check). */
  | { kind: 'finish' }
  /** The current step is DONE: move the cursor. */
  | { kind: 'advance' }
  /** The current step used its tries (or interruptions): record the step id in `blockers` once, then stop. */
  | { kind: 'block'; stepId: string; alreadyListed: boolean; reason: string }
  /** A delay (stepDelayMinutes) is running: a durable timer, checked again by the next heartbeat. */
  | { kind: 'wait'; stepId: string; until: number }
  /**
   * `tries`: the tries that count so far (this one is `tries + 1`); `interruptions` to record with it.
   * `overCap`: why the step is blocked, when `baton step` runs it once more anyway.
   */
  | { kind: 'run'; stepId: string; prompt: string; tries: number; interruptions: number; overCap?: string };

/** STEP_MAX_RETRIES and STEP_MAX_INTERRUPTIONS. */
interface LegacyLimits {
  maxRetries: number;
  maxInterruptions: number;
}

/** A step listed in `blockers` that is not DONE, with the reason the check prints for it. */
export interface LegacyBlocker {
  stepId: string;
  reason: string;
}

/** What the troubleshoot prompt and a blocker's reason say of a FAILED step that has no `error`. */
const UNKNOWN_ERROR = 'unknown';

/** What a rerun's troubleshoot prompt says of a try that a dead check (a gateway reset) cut short. */
const INTERRUPTED_ERROR = 'interrupted before it finished (the previous check stopped)';

/**
 * The run number of a step's run as written in its entry: every run, counted or interrupted, has
 * its own, so that two runs never share a BATON_ATTEMPT (the marker that finds an agent's
 * processes) nor a log. A try counts once it ends; an interrupted one gave its try back and counts
 * as an interruption instead, so the two together grow by one per run.
 */
export function runNumberOf(run: { tries: number; interruptions?: number | undefined }): number {
  return run.tries + (run.interruptions ?? 0);
}

function stepRunOf(state: LegacyState, stepId: string): LegacyStepRun {
  return state.stepRuns[stepId] ?? { status: 'PENDING', tries: 0 };
}

function isoMs(iso: string | undefined): number | null {
  if (iso === undefined) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * IN_PROGRESS found by a check (which holds the lock, so nobody runs it) means the check that ran
 * the step died: that try was interrupted, not failed. It gives its try back and counts against
 * STEP_MAX_INTERRUPTIONS instead.
 */
function countsOf(run: LegacyStepRun): { interrupted: boolean; tries: number; interruptions: number } {
  const interrupted = run.status === 'IN_PROGRESS';
  return {
    interrupted,
    tries: interrupted ? Math.max(0, run.tries - 1) : run.tries,
    interruptions: (run.interruptions ?? 0) + (interrupted ? 1 : 0),
  };
}

function failedReason(tries: number, error: string | undefined): string {
  return `failed ${tries} tries; last error: ${error ?? UNKNOWN_ERROR}`;
}

function interruptedReason(interruptions: number, limits: LegacyLimits): string {
  return `interrupted ${interruptions} times (STEP_MAX_INTERRUPTIONS ${limits.maxInterruptions})`;
}

/** Why a step cannot run now, or null when it may: the one rule behind `block` and the BLOCKED lines. */
function blockReason(run: LegacyStepRun, limits: LegacyLimits): string | null {
  const { interrupted, tries, interruptions } = countsOf(run);
  // An interrupted step is resumed whatever its tries: only the interruption budget stops it.
  if (interrupted)
    return interruptions > limits.maxInterruptions ? interruptedReason(interruptions, limits) : null;
  if (run.status === 'FAILED' && run.failureClass !== undefined)
    return `${run.failureClass}, as the agent declared: not retried; last error: ${run.error ?? UNKNOWN_ERROR}`;
  if (run.status === 'FAILED' && tries >= limits.maxRetries) return failedReason(tries, run.error);
  return null;
}

/** The entries of `blockers` whose step is not DONE, each with its reason, in the file's order. */
export function legacyBlockers(state: LegacyState, limits: LegacyLimits): LegacyBlocker[] {
  return state.blockers
    .filter((stepId, index) => state.blockers.indexOf(stepId) === index)
    .filter((stepId) => stepRunOf(state, stepId).status !== 'DONE')
    .map((stepId) => {
      const run = stepRunOf(state, stepId);
      const reason =
        blockReason(run, limits) ??
        (run.status === 'FAILED' ? failedReason(run.tries, run.error) : 'listed in blockers');
      return { stepId, reason };
    });
}

/**
 * `runBlocked`: a blocked current step runs once more instead (`baton step`, as the skill's runner,
 * which never looks at the cap: people call it to try once more).
 */
export function nextLegacyAction(
  state: LegacyState,
  now: number,
  limits: LegacyLimits,
  options: { runBlocked?: boolean } = {},
): LegacyAction {
  if (state.status === 'DONE') return { kind: 'idle' };
  const index = state.currentStep;
  if (index >= state.stepQueue.length) return { kind: 'finish' };
  const stepId = state.stepQueue[index]!;
  const run = stepRunOf(state, stepId);
  if (run.status === 'DONE') return { kind: 'advance' };
  const reason = blockReason(run, limits);
  if (reason !== null && !options.runBlocked)
    return { kind: 'block', stepId, alreadyListed: state.blockers.includes(stepId), reason };
  const { interrupted, tries, interruptions } = countsOf(run);
  const delayMs = state.stepDelayMinutes * 60_000;
  if (delayMs > 0 && !interrupted) {
    // A retry waits after this step's last run; a first try waits after the previous step finished.
    // A resumed step does not wait again: its delay passed before the interrupted run started.
    const previous = index > 0 ? state.stepRuns[state.stepQueue[index - 1]!] : undefined;
    const since = run.tries > 0 ? isoMs(run.lastRunIso) : isoMs(previous?.lastRunIso);
    if (since !== null && now < since + delayMs) return { kind: 'wait', stepId, until: since + delayMs };
  }
  const instruction = state.plan.steps[stepId]!.instruction;
  // As the skill: a FAILED step gets the troubleshoot prompt, `unknown` when it left no error.
  const prompt =
    run.status === 'FAILED'
      ? troubleshootPrompt(stepId, tries, run.error ?? UNKNOWN_ERROR, instruction)
      : interrupted && tries > 0
        ? troubleshootPrompt(stepId, tries, INTERRUPTED_ERROR, instruction)
        : instruction;
  return {
    kind: 'run',
    stepId,
    prompt,
    tries,
    interruptions,
    ...(reason !== null ? { overCap: reason } : {}),
  };
}
