import type { StoredEvent } from '../core/events.js';
import { toolCallCommands } from '../core/tool-approval.js';
import type { HookDelivery } from '../store/store.js';
import { toolCallUrls } from './tool-urls.js';
import { publicUrlOf, waitAnswers, waitUrlKey } from './wait-urls.js';

/**
 * The payload of a hook with `on: waiting`: the step's prompt or event, or the tool call its running
 * agent waits on a person for, and how to answer it, by capability URL (engine/wait-urls.ts,
 * engine/tool-urls.ts) or by command.
 */

export type WaitAnswerSource = Parameters<typeof waitAnswers>[0];

/**
 * What every hook payload starts with: its id (run, event, hook: the same at each retry), the
 * trigger, the run, the event and the run's state.
 */
export function payloadHeader(delivery: HookDelivery, hook: string | null): Record<string, unknown> {
  const { runId } = delivery;
  return {
    id: `${runId}:${delivery.eventSeq}:${delivery.hook}`,
    hook,
    runId,
    planName: delivery.planName,
    event: delivery.event,
    run: { status: delivery.runStatus, blockedReason: delivery.blockedReason },
  };
}

/**
 * A step started waiting: its prompt or event, and how to answer it: the capability URLs under
 * BATON_PUBLIC_URL (never recorded anywhere but this payload), else the exact commands.
 */
export function waitingPayload(
  delivery: HookDelivery,
  event: Extract<StoredEvent, { type: 'step.waiting' }>,
  answers: WaitAnswerSource,
): Record<string, unknown> {
  const { runId } = delivery;
  const wait = { runId, stepId: event.stepId, waitSeq: delivery.eventSeq };
  const spec = { for: event.for, event: event.waitingFor, onTimeout: 'block' as const };
  return {
    ...payloadHeader(delivery, 'waiting'),
    waiting: {
      stepId: event.stepId,
      for: event.for,
      ...(event.for === 'approval' ? { prompt: event.waitingFor } : { eventName: event.waitingFor }),
      timeoutAt: event.timeoutAt,
      // The URLs are added after masking (withWaitUrls): a token that happened to look like a key must reach the hook whole.
      ...(answers.publicUrl === null ? waitAnswers(answers, wait, spec, event.waitingFor) : {}),
    },
    hint: `baton status ${runId} shows what step ${event.stepId} waits for`,
  };
}

/**
 * A running agent's tool call is held for a person (`agent.approve`): the tool, what it would do,
 * and how to answer it: the capability URLs under BATON_PUBLIC_URL, else the exact commands.
 */
export function toolCallPayload(
  delivery: HookDelivery,
  event: Extract<StoredEvent, { type: 'step.tool_approval_requested' }>,
  answers: WaitAnswerSource,
): Record<string, unknown> {
  const { runId } = delivery;
  return {
    ...payloadHeader(delivery, 'waiting'),
    waiting: {
      stepId: event.stepId,
      for: 'tool',
      tool: event.tool,
      callId: event.callId,
      summary: event.summary,
      timeoutAt: event.timeoutAt,
      // As for a wait: the URLs are added after masking (withWaitUrls).
      ...(answers.publicUrl === null || answers.home === undefined
        ? { commands: toolCallCommands(runId, event.stepId, event.callId) }
        : {}),
    },
    hint: `baton status ${runId} shows the tool call step ${event.stepId} waits on (denied unanswered at its timeout)`,
  };
}

/** The payload of a `waiting` hook with its capability URLs, when a public address is known. */
export function withWaitUrls(
  payload: Record<string, unknown>,
  delivery: HookDelivery,
  answers: WaitAnswerSource,
): Record<string, unknown> {
  const { event } = delivery;
  if (answers.publicUrl === null) return payload;
  if (event.type === 'step.tool_approval_requested' && answers.home !== undefined) {
    const call = { runId: delivery.runId, stepId: event.stepId, requestSeq: delivery.eventSeq };
    const urls = toolCallUrls(answers.publicUrl, waitUrlKey(answers.home), call);
    return { ...payload, waiting: { ...(payload.waiting as object), urls } };
  }
  if (event.type !== 'step.waiting') return payload;
  const wait = { runId: delivery.runId, stepId: event.stepId, waitSeq: delivery.eventSeq };
  const spec = { for: event.for, onTimeout: 'block' as const };
  const found = waitAnswers(answers, wait, spec, event.waitingFor);
  return { ...payload, waiting: { ...(payload.waiting as object), ...found } };
}

/**
 * Where a hook's URLs come from (a waiting or blocked step's capability URLs, the console link):
 * BATON_PUBLIC_URL of the sending process and the key of its home. A bad address, no home or a key
 * that cannot be read or made gives the commands instead: the hook is still sent, and says how to
 * answer.
 */
export function waitAnswerSource(env: NodeJS.ProcessEnv, home: string | undefined): WaitAnswerSource {
  if (home === undefined) return { publicUrl: null, home };
  try {
    const publicUrl = publicUrlOf(env.BATON_PUBLIC_URL, 'BATON_PUBLIC_URL');
    if (publicUrl !== null) waitUrlKey(home);
    return { publicUrl, home };
  } catch {
    return { publicUrl: null, home };
  }
}
