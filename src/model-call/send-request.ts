import { fullJitterDelayMs } from '../core/backoff.js';
import type { CallState, ModelTarget } from './call-state.js';
import { classifyModelError } from './classify-model-error.js';
import { estimateRequestTokens } from './token-estimate.js';
import type { ModelFailure, ModelRequest, ModelResponse } from './types.js';

type SendResult = { ok: true; response: ModelResponse } | { ok: false; failure: ModelFailure };

interface SendOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  replaySafe: boolean;
}

/**
 * Sends one request, waiting out transient failures within the budget: full-jitter backoff, or the
 * provider's Retry-After when it asked for one (above the cap it is a persistent failure). When the
 * primary's transient retries are spent, a compatible fallback takes over, with fewer retries.
 * Overflow and fatal failures are returned at once: retrying them cannot help.
 */
export async function sendWithRetries(
  state: CallState,
  request: ModelRequest,
  options: SendOptions,
): Promise<SendResult> {
  for (;;) {
    if (!state.budget.take('requests')) return { ok: false, failure: budgetFailure('requests', state) };
    state.requests++;
    try {
      const response = await state.target.provider.complete(
        { ...request, model: state.target.model },
        {
          ...(options.signal === undefined ? {} : { signal: options.signal }),
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        },
      );
      state.usage.inputTokens += response.usage.inputTokens;
      state.usage.outputTokens += response.usage.outputTokens;
      return { ok: true, response };
    } catch (error) {
      if (options.signal?.aborted) return { ok: false, failure: abortedFailure() };
      const failure = classifyModelError(error, { replaySafe: options.replaySafe, now: state.clock.now() });
      if (failure.kind !== 'transient') return { ok: false, failure };
      const waited = await waitBeforeRetry(state, failure, options.signal);
      if (waited === 'aborted') return { ok: false, failure: abortedFailure() };
      if (waited === 'retry') continue;
      if (switchToFallback(state, request, failure)) continue;
      return {
        ok: false,
        failure: waited === 'too_long' ? { ...failure, reason: 'retry_after_too_long' } : failure,
      };
    }
  }
}

async function waitBeforeRetry(
  state: CallState,
  failure: ModelFailure,
  signal: AbortSignal | undefined,
): Promise<'retry' | 'spent' | 'too_long' | 'aborted'> {
  const counter = state.onFallback ? 'fallbackTransientRetries' : 'transientRetries';
  let waitMs: number;
  if (failure.retryAfterMs !== undefined) {
    if (failure.retryAfterMs > state.backoff.retryAfterCapMs) {
      state.record('recovery.gave_up', {
        ...failureFields(failure),
        reason: 'retry_after_too_long',
        waitMs: failure.retryAfterMs,
      });
      return 'too_long';
    }
    waitMs = Math.ceil(failure.retryAfterMs);
  } else {
    const curve = { initialDelayMs: state.backoff.baseMs, factor: 2, maxDelayMs: state.backoff.capMs };
    waitMs = fullJitterDelayMs(curve, state.retriesOnTarget + 1, state.random);
  }
  if (state.budget.remaining(counter) < 1 || state.budget.remaining('waitMs') < waitMs) return 'spent';
  state.budget.take(counter);
  state.budget.take('waitMs', waitMs);
  state.retriesOnTarget++;
  state.record('recovery.retried', { ...failureFields(failure), waitMs });
  try {
    await state.clock.sleep(waitMs, signal);
  } catch {
    return 'aborted';
  }
  return 'retry';
}

/** True when a compatible fallback was switched to; records why not otherwise. */
function switchToFallback(state: CallState, request: ModelRequest, failure: ModelFailure): boolean {
  const fallback = state.fallback;
  if (state.onFallback || fallback === undefined) return false;
  const incompatible = incompatibility(fallback, request);
  if (incompatible !== null) {
    state.record('recovery.gave_up', {
      ...failureFields(failure),
      reason: 'fallback_incompatible',
      message: incompatible,
    });
    return false;
  }
  if (!state.budget.take('fallbacks')) return false;
  state.record('recovery.fell_back', {
    ...failureFields(failure),
    toProvider: fallback.provider.name,
    toModel: fallback.model,
  });
  state.target = fallback;
  state.onFallback = true;
  state.retriesOnTarget = 0;
  return true;
}

/** Why `target` cannot take `request`, or null: tools, window and output limit must all fit. */
function incompatibility(target: ModelTarget, request: ModelRequest): string | null {
  const caps = target.capabilities;
  if (request.tools && request.tools.length > 0 && !caps.supportsTools) {
    return `${target.model} does not support tools and the request has ${request.tools.length}`;
  }
  const input = estimateRequestTokens(request).total;
  if (caps.contextWindow < input + request.maxOutputTokens) {
    return `${target.model} has a ${caps.contextWindow}-token window; the request needs ~${input} + ${request.maxOutputTokens}`;
  }
  if (caps.maxOutputTokens < request.maxOutputTokens) {
    return `${target.model} outputs at most ${caps.maxOutputTokens} tokens; the request needs ${request.maxOutputTokens}`;
  }
  return null;
}

export function failureFields(failure: ModelFailure): {
  failureClass: ModelFailure['failureClass'];
  reason: string;
  status?: number;
  code?: string;
  message: string;
} {
  return {
    failureClass: failure.failureClass,
    reason: failure.reason,
    ...(failure.status === undefined ? {} : { status: failure.status }),
    ...(failure.code === undefined ? {} : { code: failure.code }),
    message: failure.message,
  };
}

function budgetFailure(counter: string, state: CallState): ModelFailure {
  return {
    kind: 'fatal',
    failureClass: 'budget',
    reason: `recovery_budget_${counter}`,
    message: `the recovery budget allows no more ${counter} (${state.requests} request(s) sent in this call)`,
  };
}

function abortedFailure(): ModelFailure {
  return {
    kind: 'fatal',
    failureClass: 'interrupted',
    reason: 'aborted',
    message: 'the model call was aborted',
  };
}
