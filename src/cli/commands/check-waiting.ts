import type { PlanStep } from '../../core/plan/types.js';
import { toolCallCommands, toolCallLine } from '../../core/tool-approval.js';
import { waitingHints } from '../../runtime/format.js';
import type { RunToolCall } from '../../runtime/run-reads.js';
import type { WaitingStep } from '../../runtime/types.js';

// What `baton check` prints of the steps that wait, once for the full check (check.ts), the idle
// read (check-idle.ts) and a foreground `baton run` whose step starts waiting (run-follow.ts): light
// imports only, the idle read is bundled into the launcher.

/** WAITING lines shown at most; the rest are counted (baton status <run> shows each). */
export const WAITING_SHOWN = 20;

/**
 * One WAITING line per waiting step (`shown`, with its plan step; masked by the caller), each with
 * the exact commands that end it, then how many more wait of `total`.
 */
export function waitingLines(
  shown: readonly { waiting: WaitingStep; step: PlanStep | undefined }[],
  total: number,
): string {
  const lines: string[] = [];
  for (const { waiting, step } of shown) {
    if (!step) continue;
    const [what, ...commands] = waitingHints(waiting.runId, step, waiting.waitingFor);
    lines.push(`WAITING run ${waiting.runId} (${waiting.planName}): ${what}`, ...commands);
  }
  if (total > shown.length)
    lines.push(`... and ${total - shown.length} more waiting steps (baton status lists the runs)`);
  return lines.map((line) => `${line}\n`).join('');
}

/**
 * One WAITING line per tool call a running agent waits on a person for (`agent.approve`), with the
 * commands that answer it. The idle read never has any: a running step with approval rules sends
 * the check down the full path (runtime/idle-read.ts).
 */
export function toolCallLines(calls: readonly RunToolCall[]): string {
  const lines: string[] = [];
  for (const call of calls)
    lines.push(
      `WAITING run ${call.runId} (${call.planName}): ${toolCallLine(call, new Date(call.timeoutAt).toISOString())}`,
      ...toolCallCommands(call.runId, call.stepId, call.callId).map((command) => `  ${command}`),
    );
  return lines.map((line) => `${line}\n`).join('');
}
