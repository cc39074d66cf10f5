import { durationText } from './plan/duration.js';

/**
 * How an attempt the stall watchdog stopped (`agent.stallTimeoutMs`) is worded: the start of its
 * failure message. One place, because `/metrics` counts stalls by it in SQL (store/metrics-rows.ts).
 */
export const STALL_MESSAGE_START = 'no output or workspace change for ';

export function stallMessage(stallTimeoutMs: number): string {
  return `${STALL_MESSAGE_START}${durationText(stallTimeoutMs)} (agent.stallTimeoutMs)`;
}
