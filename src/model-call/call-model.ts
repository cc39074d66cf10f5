import type { RandomSource } from '../core/backoff.js';
import { recordableMessage } from '../core/redact.js';
import {
  type BackoffSettings,
  CallState,
  DEFAULT_BACKOFF,
  type HarnessEvent,
  type ModelTarget,
} from './call-state.js';
import { type HarnessClock, systemClock } from './clock.js';
import { type CompactionHook, defaultCompaction } from './compaction.js';
import { detectTruncation } from './detect-truncation.js';
import { resolveCapabilities } from './model-capabilities.js';
import { RecoveryBudget, type RecoveryLimits } from './recovery-budget.js';
import { failureFields, sendWithRetries } from './send-request.js';
import { estimateRequestTokens } from './token-estimate.js';
import type {
  ChatMessage,
  ModelCapabilities,
  ModelFailure,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelUsage,
} from './types.js';

export interface CallModelOptions {
  provider: ModelProvider;
  request: ModelRequest;
  /** What the model can take; default: the capability table entry for `request.model`. */
  capabilities?: ModelCapabilities;
  /** Used only after the primary's transient retries are spent, and only when compatible. */
  fallback?: { provider: ModelProvider; model: string; capabilities?: ModelCapabilities };
  /** The run's recovery budget; this call draws on a child of it. Default: a fresh run budget. */
  budget?: RecoveryBudget;
  /** Limits of this call (defaults: 3 transient retries, 1 compaction, 1 reissue, ...). */
  limits?: Partial<RecoveryLimits>;
  backoff?: Partial<BackoffSettings>;
  /** Called once on an input overflow; `false` turns compaction off. Default: {@link defaultCompaction}. */
  compact?: CompactionHook | false;
  clock?: HarnessClock;
  random?: RandomSource;
  /** Per-request timeout in milliseconds. */
  timeoutMs?: number;
  signal?: AbortSignal;
  onEvent?: (event: HarnessEvent) => void;
  callId?: string;
  stepId?: string;
  /** Strings masked wherever the harness records text (API keys the caller knows of). */
  secrets?: string[];
  /** Whether a request may be sent again after a stream broke mid-way. Default true. */
  replaySafe?: boolean;
}

type CallOutcome = 'ok' | 'recovered' | 'degraded';

export type ModelCallResult =
  | {
      ok: true;
      response: ModelResponse;
      /** The history to continue from: the caller's, or the compacted one that replaced it. */
      messages: ChatMessage[];
      outcome: CallOutcome;
      /** The text is still cut after the reissue and the continuation. */
      truncated: boolean;
      requests: number;
      usage: ModelUsage;
      provider: string;
      model: string;
    }
  | {
      ok: false;
      failure: ModelFailure;
      /** For an overflow that compaction could not fix: estimated tokens per part. */
      diagnosis?: string;
      messages: ChatMessage[];
      requests: number;
      usage: ModelUsage;
      provider: string;
      model: string;
    };

/** The prompt of a continuation; it goes to a temporary copy of the history, never into it. */
export const CONTINUE_PROMPT =
  'Your previous answer was cut off by the output limit. Continue exactly where it stopped, without repeating anything.';

const SAFETY_MARGIN = 0.05;

let callCounter = 0;

/**
 * One model call that recovers by class: classify first; transient → backoff
 * with full jitter (Retry-After honoured up to a cap); input overflow → compact once and retry;
 * input + output overflow → lower the output budget once; truncation → reissue once with a larger
 * budget, then one continuation of plain text; a truncated tool call is never executed nor
 * continued, only regenerated; fallback only when compatible; fatal → stop. All of it within one
 * budget, every action recorded. Never throws for a failed call: the result says what happened.
 */
export async function callModelWithRecovery(options: CallModelOptions): Promise<ModelCallResult> {
  const primary: ModelTarget = {
    provider: options.provider,
    model: options.request.model,
    capabilities: options.capabilities ?? resolveCapabilities(options.request.model),
  };
  const fallback: ModelTarget | undefined = options.fallback && {
    provider: options.fallback.provider,
    model: options.fallback.model,
    capabilities: options.fallback.capabilities ?? resolveCapabilities(options.fallback.model),
  };
  const state = new CallState(
    primary,
    fallback,
    (options.budget ?? new RecoveryBudget()).child(options.limits),
    { ...DEFAULT_BACKOFF, ...options.backoff },
    options.clock ?? systemClock,
    options.random ?? Math.random,
    options.callId ?? `call-${process.pid}-${++callCounter}`,
    options.stepId,
    options.secrets ?? [],
    options.onEvent,
  );
  const compact = options.compact === false ? null : (options.compact ?? defaultCompaction());
  const sendOptions = {
    replaySafe: options.replaySafe ?? true,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
  let messages = [...options.request.messages];
  const request: ModelRequest = { ...options.request, messages };

  const fail = (failure: ModelFailure, diagnosis?: string): ModelCallResult => {
    state.emit(finished(state, 'failed', failure));
    return {
      ok: false,
      failure: { ...failure, message: recordableMessage(failure.message, state.secrets) },
      ...(diagnosis === undefined ? {} : { diagnosis }),
      messages,
      requests: state.requests,
      usage: state.usage,
      provider: state.target.provider.name,
      model: state.target.model,
    };
  };
  const succeed = (response: ModelResponse, truncated: boolean): ModelCallResult => {
    const outcome: CallOutcome =
      truncated || state.onFallback ? 'degraded' : state.actions > 0 ? 'recovered' : 'ok';
    if (outcome !== 'ok') state.emit(finished(state, outcome));
    return {
      ok: true,
      response,
      messages,
      outcome,
      truncated,
      requests: state.requests,
      usage: state.usage,
      provider: state.target.provider.name,
      model: state.target.model,
    };
  };

  let reissued = false;
  for (;;) {
    const sent = await sendWithRetries(state, request, sendOptions);
    if (!sent.ok) {
      const failure = sent.failure;
      if (failure.kind === 'output_overflow') {
        const lowered = fittingOutputBudget(state, request, failure);
        if (lowered !== null && state.budget.take('outputReductions')) {
          state.record('recovery.output_reduced', {
            ...failureFields(failure),
            maxOutputBefore: request.maxOutputTokens,
            maxOutputAfter: lowered,
          });
          request.maxOutputTokens = lowered;
          continue;
        }
      }
      if (failure.kind === 'input_overflow' || failure.kind === 'output_overflow') {
        if (compact !== null && state.budget.take('compactions')) {
          const before = estimateRequestTokens(request).total;
          const target = targetInputTokens(state, request);
          const compacted = await compact({
            messages,
            targetTokens: target,
            ...(options.signal === undefined ? {} : { signal: options.signal }),
          });
          const after = estimateRequestTokens({ ...request, messages: compacted }).total;
          state.record('recovery.compacted', {
            ...failureFields(failure),
            tokensBefore: before,
            tokensAfter: after,
          });
          if (after < before) {
            messages = compacted;
            request.messages = compacted;
            continue;
          }
        }
        return fail(failure, overflowDiagnosis(state, request));
      }
      state.record('recovery.gave_up', failureFields(failure));
      return fail(failure);
    }

    const response = sent.response;
    const truncation = detectTruncation(response, request);
    if (truncation === null) return succeed(response, false);
    const raised = raisedOutputBudget(state, request);
    if (!reissued && raised !== null && state.budget.take('reissues')) {
      reissued = true;
      state.record('recovery.reissued', {
        reason: truncation.reason,
        maxOutputBefore: request.maxOutputTokens,
        maxOutputAfter: raised,
      });
      request.maxOutputTokens = raised;
      continue;
    }
    if (truncation.toolCall) {
      // A cut tool call is never executed and never continued.
      return fail({
        kind: 'fatal',
        failureClass: 'invalid',
        reason: 'truncated_tool_call',
        message: `the model's tool call was cut off at ${response.usage.outputTokens} output tokens (limit ${request.maxOutputTokens}) ${reissued ? 'again after a reissue with a larger budget' : 'and the output budget cannot be raised'}; it was not executed`,
      });
    }
    return continueText(state, request, response, sendOptions, succeed);
  }
}

/** One continuation of cut plain text, on a temporary copy of the history; the parts are joined. */
async function continueText(
  state: CallState,
  request: ModelRequest,
  partial: ModelResponse,
  sendOptions: Parameters<typeof sendWithRetries>[2],
  succeed: (response: ModelResponse, truncated: boolean) => ModelCallResult,
): Promise<ModelCallResult> {
  if (!state.budget.take('continuations')) return succeed(partial, true);
  state.record('recovery.continued', { reason: 'truncated_text' });
  const temporary: ChatMessage[] = [
    ...request.messages,
    { role: 'assistant', content: partial.text },
    { role: 'user', content: CONTINUE_PROMPT },
  ];
  const sent = await sendWithRetries(state, { ...request, messages: temporary }, sendOptions);
  if (!sent.ok) return succeed(partial, true);
  const rest = sent.response;
  const joined: ModelResponse = {
    ...rest,
    text: partial.text + rest.text,
    toolCalls: [],
    usage: {
      inputTokens: partial.usage.inputTokens + rest.usage.inputTokens,
      outputTokens: partial.usage.outputTokens + rest.usage.outputTokens,
    },
  };
  const stillCut = detectTruncation(rest, request) !== null || rest.toolCalls.length > 0;
  return succeed({ ...joined, finishReason: stillCut ? 'length' : rest.finishReason }, stillCut);
}

/** The output budget that fits beside the input, or null when it cannot be lowered usefully. */
function fittingOutputBudget(state: CallState, request: ModelRequest, failure: ModelFailure): number | null {
  const window = failure.limitTokens ?? state.target.capabilities.contextWindow;
  const input = failure.inputTokens ?? estimateRequestTokens(request).total;
  const fit = Math.floor((window - input) * (1 - SAFETY_MARGIN));
  return fit >= 256 && fit < request.maxOutputTokens ? fit : null;
}

/** Double the output budget, capped by the model's maximum and by what fits beside the input. */
function raisedOutputBudget(state: CallState, request: ModelRequest): number | null {
  const caps = state.target.capabilities;
  const input = estimateRequestTokens(request).total;
  const raised = Math.min(request.maxOutputTokens * 2, caps.maxOutputTokens, caps.contextWindow - input);
  return raised > request.maxOutputTokens ? raised : null;
}

function targetInputTokens(state: CallState, request: ModelRequest): number {
  const window = state.target.capabilities.contextWindow;
  return Math.max(256, Math.floor((window - request.maxOutputTokens) * (1 - SAFETY_MARGIN)));
}

function overflowDiagnosis(state: CallState, request: ModelRequest): string {
  const parts = estimateRequestTokens(request);
  const caps = state.target.capabilities;
  return (
    `the request still does not fit ${state.target.model}: ~${parts.total} input tokens estimated ` +
    `(system ${parts.system}, messages ${parts.messages}, tools ${parts.tools}) + ${request.maxOutputTokens} output ` +
    `> ${caps.contextWindow}-token window`
  );
}

function finished(
  state: CallState,
  outcome: 'recovered' | 'degraded' | 'failed',
  failure?: ModelFailure,
): HarnessEvent {
  return {
    type: 'recovery.finished',
    ...(state.stepId === undefined ? {} : { stepId: state.stepId }),
    callId: state.callId,
    provider: state.target.provider.name,
    model: state.target.model,
    outcome,
    requests: state.requests,
    ...(failure === undefined ? {} : { failureClass: failure.failureClass, reason: failure.reason }),
  };
}
