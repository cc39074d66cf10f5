import type { BlockedStepAnswer } from '../core/notification.js';
import type { HookDelivery, Store } from '../store/store.js';
import { blockedCommands, blockedUrls, blockSeqOf } from './blocked-urls.js';
import { waitUrlKey } from './wait-urls.js';
import type { WaitAnswerSource } from './waiting-hook-payload.js';

/**
 * The blocked steps a `blocked` or `budget` hook names, and how to answer each: capability URLs
 * under BATON_PUBLIC_URL (blocked-urls.ts), else `baton retry|skip`. Read when the call is made:
 * a step someone has already retried is left out, and a URL is only ever made for a block that is
 * still there when the call is made.
 */

/** At most this many blocked steps are listed (a chat message holds a few buttons, ntfy three actions). */
const MAX_BLOCKED_STEPS = 5;

export interface BlockedStep {
  stepId: string;
  reason: string | null;
  blockSeq: number;
}

/**
 * The steps blocked now, first in plan order, each with the event that blocked it (for a step's
 * budget, the `step.blocked` right after the hook's `budget.exceeded`).
 */
export async function blockedStepsOf(store: Store, delivery: HookDelivery): Promise<BlockedStep[]> {
  const { event } = delivery;
  // A failed attempt that left its step blocked (no tries left, or not worth retrying) lists that
  // step alone, so a hook on `failed` carries its answers too; a hook call delivered late, after a
  // later attempt blocked the step, does not (that attempt's own hook says so).
  const failed = event.type === 'step.failed' ? { stepId: event.stepId, attempt: event.attempt } : null;
  if (event.type !== 'run.blocked' && event.type !== 'budget.exceeded' && failed === null) return [];
  const run = await store.getRunSteps(delivery.runId, { statuses: ['blocked'], everyStepUpTo: 0 });
  if (!run || run.steps.length === 0) return [];
  const events = await store.getEvents(delivery.runId);
  const steps: BlockedStep[] = [];
  for (const step of run.steps) {
    if (step.status !== 'blocked') continue;
    if (failed && (step.stepId !== failed.stepId || step.attempt !== failed.attempt)) continue;
    const blockSeq = blockSeqOf(events, step.stepId);
    if (blockSeq === null) continue;
    steps.push({ stepId: step.stepId, reason: step.blockedReason, blockSeq });
    if (steps.length === MAX_BLOCKED_STEPS) break;
  }
  return steps;
}

/**
 * The steps as the payload lists them before masking: the commands when no public address is
 * known (the URLs are added after masking, by withBlockedUrls).
 */
export function blockedPayloadSteps(steps: readonly BlockedStep[], runId: string, answers: WaitAnswerSource) {
  return steps.map(
    (step): BlockedStepAnswer => ({
      stepId: step.stepId,
      reason: step.reason,
      ...(answers.publicUrl === null ? { commands: blockedCommands(runId, step.stepId) } : {}),
    }),
  );
}

/** The masked steps with their capability URLs, when a public address is known. */
export function withBlockedUrls(
  masked: readonly BlockedStepAnswer[],
  steps: readonly BlockedStep[],
  runId: string,
  answers: WaitAnswerSource,
  runBudgetBlocked: boolean,
): BlockedStepAnswer[] {
  const { publicUrl, home } = answers;
  // A run stopped by its budget takes `baton resume` first: a retry would be refused.
  if (publicUrl === null || home === undefined || runBudgetBlocked) return [...masked];
  const key = waitUrlKey(home);
  return masked.map((step, index) => ({
    ...step,
    urls: blockedUrls(publicUrl, key, { runId, stepId: step.stepId, blockSeq: steps[index]!.blockSeq }),
  }));
}
