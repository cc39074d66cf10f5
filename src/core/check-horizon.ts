import type { StepState } from './run-state.js';

/**
 * What one `baton check` takes, so that it ends: the work due when it started (`dueBy`, its start),
 * and the work that work makes due on the way without a timer (a step's successors, the first steps
 * of a run its schedule slot started, a fan-out's items, a wait step that starts waiting, a human's
 * retry). Work a timer makes due after its start (a retry's backoff, `delayBeforeMs`, a wait's
 * timeout, a schedule's next slot) is left for the next check: a check of every-minute schedules, or
 * of a step that keeps failing with a short backoff, still ends, and a heartbeat's checks never pile
 * up. A worker and `baton run` have no horizon (`dueBy` undefined): they take whatever is due.
 */

/**
 * Whether a due step is within the horizon `dueBy` (undefined: no horizon). A `ready` step due no later
 * than when it was last changed was made due with no delay; any other due time (a `retry_wait`'s
 * backoff, a delay, a waiting step's timeout) counts only if it came by `dueBy`.
 */
export function withinCheckHorizon(
  step: Pick<StepState, 'status' | 'dueAt' | 'updatedAt'>,
  dueBy: number | undefined,
): boolean {
  if (dueBy === undefined || step.dueAt === null || step.dueAt <= dueBy) return true;
  return step.status === 'ready' && step.dueAt <= step.updatedAt;
}

/** Up to when a cycle at `now` decides the slots of schedules: now, or a check's start. */
export function slotsDueBy(request: { now: number; dueBy?: number }): number {
  return request.dueBy === undefined ? request.now : Math.min(request.now, request.dueBy);
}
