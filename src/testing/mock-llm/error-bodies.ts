import {
  geminiBadRequestResponse,
  geminiFatalResponse,
  geminiQuotaResponse,
  geminiRateLimitResponse,
  geminiRateWindowTooLargeResponse,
  geminiServerErrorResponse,
} from './gemini-error-bodies.js';
import type { ProviderErrorResponse } from './overflow-bodies.js';
import type { Wire } from './types.js';

/**
 * Provider-shaped error answers other than context overflow. OpenAI (Chat Completions and
 * Responses) wraps `{ error: { message, type, param, code } }`; Anthropic sends
 * `{ type: 'error', error: { type, message } }`; Gemini's are in gemini-error-bodies.ts.
 */

function openaiError(status: number, message: string, type: string, code: string | null, param?: string) {
  return { status, body: { error: { message, type, param: param ?? null, code } } };
}

function anthropicError(status: number, type: string, message: string): ProviderErrorResponse {
  return { status, body: { type: 'error', error: { type, message } } };
}

/** When a rate-limited client may try again: the fault's retry fields. */
interface RetryAfter {
  /** `retry-after: <seconds>`. */
  retryAfterS?: number;
  /** `retry-after-ms: <ms>`. */
  retryAfterMs?: number;
  /** `retry-after: <HTTP date>`, this many seconds from `nowMs` (rounded up to a whole second). */
  retryAfterDate?: number;
}

function retryHeaders(retry: RetryAfter, nowMs: number): Record<string, string> {
  const headers: Record<string, string> = {};
  if (retry.retryAfterS !== undefined) headers['retry-after'] = String(retry.retryAfterS);
  if (retry.retryAfterDate !== undefined) {
    const at = Math.ceil((nowMs + retry.retryAfterDate * 1000) / 1000) * 1000;
    headers['retry-after'] = new Date(at).toUTCString();
  }
  if (retry.retryAfterMs !== undefined) headers['retry-after-ms'] = String(retry.retryAfterMs);
  return headers;
}

/** The advertised wait in seconds, whichever field gave it (undefined when none did). */
function retryDelaySeconds(retry: RetryAfter): number | undefined {
  if (retry.retryAfterS !== undefined) return retry.retryAfterS;
  if (retry.retryAfterDate !== undefined) return retry.retryAfterDate;
  return retry.retryAfterMs === undefined ? undefined : retry.retryAfterMs / 1000;
}

export function rateLimitResponse(
  wire: Wire,
  retry: RetryAfter = {},
  nowMs = Date.now(),
): ProviderErrorResponse {
  const headers = retryHeaders(retry, nowMs);
  const delay = retryDelaySeconds(retry);
  if (wire === 'gemini') return { ...geminiRateLimitResponse(delay), headers };
  const response =
    wire === 'anthropic'
      ? anthropicError(
          429,
          'rate_limit_error',
          'This request would exceed the rate limit for your organization of 50 requests per minute. ' +
            'For details, refer to: https://docs.anthropic.com/en/api/rate-limits.',
        )
      : openaiError(
          429,
          'Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 500, Used 500, ' +
            `Requested 1. Please try again in ${delay === undefined ? '120ms' : `${delay}s`}.`,
          'requests',
          'rate_limit_exceeded',
        );
  return { ...response, headers };
}

/** A single request larger than the whole tokens-per-minute window: waiting never helps. */
export function rateWindowTooLargeResponse(wire: Wire): ProviderErrorResponse {
  if (wire === 'gemini') return geminiRateWindowTooLargeResponse();
  return wire !== 'anthropic'
    ? openaiError(
        429,
        'Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 45000. ' +
          'The input or output tokens must be reduced in order to run successfully. ' +
          'Visit https://platform.openai.com/account/rate-limits to learn more.',
        'tokens',
        'rate_limit_exceeded',
      )
    : anthropicError(
        429,
        'rate_limit_error',
        'This request would exceed the rate limit for your organization of 30,000 input tokens per minute. ' +
          'For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can see the response headers ' +
          'for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.',
      );
}

export function serverErrorResponse(wire: Wire, status: 500 | 502 | 503 | 529 = 500): ProviderErrorResponse {
  if (wire === 'gemini') return geminiServerErrorResponse(status);
  if (wire === 'anthropic') {
    if (status === 529) return anthropicError(529, 'overloaded_error', 'Overloaded');
    return anthropicError(status, 'api_error', 'Internal server error');
  }
  const message =
    status === 503
      ? 'The engine is currently overloaded, please try again later.'
      : 'The server had an error while processing your request. Sorry about that!';
  return openaiError(status, message, 'server_error', null);
}

export function fatalResponse(wire: Wire, status: 400 | 401 | 403 | 404 = 401): ProviderErrorResponse {
  if (wire === 'gemini') return geminiFatalResponse(status);
  if (wire === 'anthropic') {
    if (status === 400)
      return anthropicError(
        400,
        'invalid_request_error',
        'temperature: Input should be less than or equal to 1',
      );
    if (status === 403) {
      return anthropicError(
        403,
        'permission_error',
        'Your API key does not have permission to use the specified resource.',
      );
    }
    if (status === 404) return anthropicError(404, 'not_found_error', 'model: claude-no-such-model');
    return anthropicError(401, 'authentication_error', 'invalid x-api-key');
  }
  if (status === 400) {
    return openaiError(
      400,
      "Invalid value for 'temperature': expected a number between 0 and 2, got 3.",
      'invalid_request_error',
      'invalid_value',
      'temperature',
    );
  }
  if (status === 403) {
    return openaiError(
      403,
      'Project `proj_x` does not have access to model `gpt-4o`',
      'invalid_request_error',
      'model_not_found',
    );
  }
  if (status === 404) {
    return openaiError(
      404,
      'The model `gpt-no-such-model` does not exist or you do not have access to it.',
      'invalid_request_error',
      'model_not_found',
    );
  }
  // The real message echoes a masked key; this one never echoes what the client sent.
  return openaiError(
    401,
    'Incorrect API key provided: sk-****. You can find your API key at https://platform.openai.com/account/api-keys.',
    'invalid_request_error',
    'invalid_api_key',
  );
}

export function quotaResponse(wire: Wire): ProviderErrorResponse {
  if (wire === 'gemini') return geminiQuotaResponse();
  return wire !== 'anthropic'
    ? openaiError(
        429,
        'You exceeded your current quota, please check your plan and billing details. For more information on ' +
          'this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
        'insufficient_quota',
        'insufficient_quota',
      )
    : anthropicError(
        400,
        'invalid_request_error',
        'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or ' +
          'purchase credits.',
      );
}

/** The body of an error sent inside an already started Chat Completions or Anthropic stream. */
export function midstreamErrorPayload(wire: Wire): unknown {
  return wire !== 'anthropic'
    ? {
        error: {
          message: 'The server had an error while processing your request. Sorry about that!',
          type: 'server_error',
          param: null,
          code: null,
        },
      }
    : { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
}

export function unknownRouteResponse(method: string, path: string): ProviderErrorResponse {
  return openaiError(404, `Unknown request URL: ${method} ${path}.`, 'invalid_request_error', 'unknown_url');
}

export function badRequestBodyResponse(wire: Wire, detail: string): ProviderErrorResponse {
  if (wire === 'gemini') return geminiBadRequestResponse(`Invalid JSON payload received. ${detail}`);
  return wire !== 'anthropic'
    ? openaiError(
        400,
        `We could not parse the JSON body of your request. (${detail})`,
        'invalid_request_error',
        null,
      )
    : anthropicError(400, 'invalid_request_error', `There was an issue with the request body: ${detail}`);
}
