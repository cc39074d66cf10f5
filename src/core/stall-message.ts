import { durationText } from './plan/duration.js';

/**
 * How an attempt stopped as stalled is worded: an agent the watchdog of `agent.stallTimeoutMs`
 * stopped, a function that called no `ctx.heartbeat()` for its `heartbeatTimeoutMs`, or a model
 * step's streamed response silent for its `model.stallTimeoutMs`. The start of its failure message. One place, because `/metrics` counts stalls by it in SQL
 * (store/metrics-rows.ts).
 */
export const STALL_MESSAGE_START = 'no output or workspace change for ';
export const HEARTBEAT_STALL_MESSAGE_START = 'no heartbeat for ';
export const STREAM_STALL_MESSAGE_START = 'no streamed output for ';

export function stallMessage(stallTimeoutMs: number): string {
  return `${STALL_MESSAGE_START}${durationText(stallTimeoutMs)} (agent.stallTimeoutMs)`;
}

export function heartbeatStallMessage(heartbeatTimeoutMs: number): string {
  return `${HEARTBEAT_STALL_MESSAGE_START}${durationText(heartbeatTimeoutMs)} (heartbeatTimeoutMs)`;
}

export function streamStallMessage(stallTimeoutMs: number): string {
  return `${STREAM_STALL_MESSAGE_START}${durationText(stallTimeoutMs)} (model.stallTimeoutMs)`;
}

/** The `step.stalling` notice of an attempt silent for `silentMs`, half of its `stallTimeoutMs`. */
export function stallingEvent(
  attempt: { stepId: string; attempt: number },
  silentMs: number,
  stallTimeoutMs: number,
) {
  return {
    type: 'step.stalling' as const,
    stepId: attempt.stepId,
    attempt: attempt.attempt,
    silentMs,
    stallTimeoutMs,
  };
}
