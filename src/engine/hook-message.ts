import { hookTrigger } from '../core/hooks.js';
import type { BlockedStepAnswer, Notification, WaitingStepAnswer } from '../core/notification.js';
import { notificationOf } from '../core/notification.js';
import { redactValue } from '../core/redact.js';
import type { HookDelivery, Store } from '../store/store.js';
import { blockedPayloadSteps, blockedStepsOf, withBlockedUrls } from './blocked-hook-payload.js';
import {
  payloadHeader,
  toolCallPayload,
  waitAnswerSource,
  waitingPayload,
  withWaitUrls,
} from './waiting-hook-payload.js';

/**
 * What one hook call says: Baton's payload (the event, the run, what to do) and the notification
 * drawn from it (core/notification.ts), which a hook's `format` renders. Everything is masked
 * before the capability URLs are added: a token that happened to look like a key must reach the
 * hook whole.
 */
export interface HookMessage {
  payload: Record<string, unknown>;
  notification: Notification;
}

interface HookMessageOptions {
  env: NodeJS.ProcessEnv;
  home: string | undefined;
  /** The values masked for this run. */
  secrets: readonly string[];
}

export async function hookMessage(
  store: Store,
  delivery: HookDelivery,
  options: HookMessageOptions,
): Promise<HookMessage> {
  const { runId } = delivery;
  const answers = waitAnswerSource(options.env, options.home);
  const blocked = await blockedStepsOf(store, delivery);
  const base =
    delivery.event.type === 'step.waiting'
      ? waitingPayload(delivery, delivery.event, answers)
      : delivery.event.type === 'step.tool_approval_requested'
        ? toolCallPayload(delivery, delivery.event, answers)
        : {
            ...payloadHeader(delivery, hookTrigger(delivery.event)),
            ...(blocked.length > 0
              ? { blocked: { steps: blockedPayloadSteps(blocked, runId, answers) } }
              : {}),
            hint:
              delivery.runStatus === 'blocked'
                ? `baton status ${runId} shows what is blocked and why; then baton retry|skip|resolve ${runId} <step>, or baton resume ${runId} for a budget`
                : `baton status ${runId}`,
          };
  const masked = redactValue(base, options.secrets);
  const budgetBlocked =
    delivery.runStatus === 'blocked' && (delivery.blockedReason?.startsWith('budget:') ?? false);
  let payload = withWaitUrls(masked, delivery, answers);
  const steps = (masked.blocked as { steps: BlockedStepAnswer[] } | undefined)?.steps;
  if (steps)
    payload = {
      ...payload,
      blocked: { steps: withBlockedUrls(steps, blocked, runId, answers, budgetBlocked) },
    };
  const notification = notificationOf({
    trigger: hookTrigger(delivery.event) ?? 'blocked',
    runId,
    planName: delivery.planName,
    runStatus: delivery.runStatus,
    blockedReason: (payload.run as { blockedReason: string | null }).blockedReason,
    event: payload.event as HookDelivery['event'],
    publicUrl: answers.publicUrl,
    ...(payload.waiting ? { waiting: payload.waiting as WaitingStepAnswer } : {}),
    ...(payload.blocked ? { blocked: (payload.blocked as { steps: BlockedStepAnswer[] }).steps } : {}),
  });
  return { payload, notification };
}
