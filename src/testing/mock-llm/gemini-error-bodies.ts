import type { ProviderErrorResponse } from './overflow-bodies.js';

/**
 * Gemini API errors: a google.rpc.Status as JSON, `{ error: { code, message, status, details? } }`.
 * gemini-cli reads `details`: a RetryInfo `retryDelay` sets its wait, a QuotaFailure whose quotaId
 * says PerDay makes a 429 terminal, PerMinute means "retry after 60s".
 */

const TYPE = 'type.googleapis.com/google.rpc.';

function googleError(
  code: number,
  status: string,
  message: string,
  details?: unknown[],
): ProviderErrorResponse {
  return { status: code, body: { error: { code, message, status, ...(details ? { details } : {}) } } };
}

function quotaFailure(quotaId: string, quotaMetric: string, quotaValue: string) {
  return {
    '@type': `${TYPE}QuotaFailure`,
    violations: [
      { quotaMetric, quotaId, quotaDimensions: { location: 'global', model: 'gemini-mock' }, quotaValue },
    ],
  };
}

const RATE_LIMITS_HELP =
  'You exceeded your current quota, please check your plan and billing details. For more information on this ' +
  'error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.';

/** 429 RESOURCE_EXHAUSTED; with a delay, a RetryInfo detail and "Please retry in Ns." like the real one. */
export function geminiRateLimitResponse(delaySeconds: number | undefined): ProviderErrorResponse {
  if (delaySeconds === undefined) {
    return googleError(
      429,
      'RESOURCE_EXHAUSTED',
      `${RATE_LIMITS_HELP}\n* Quota exceeded for requests per minute.`,
      [],
    );
  }
  return googleError(
    429,
    'RESOURCE_EXHAUSTED',
    `${RATE_LIMITS_HELP}\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_requests, ` +
      `limit: 60, model: gemini-mock\nPlease retry in ${delaySeconds}s.`,
    [{ '@type': `${TYPE}RetryInfo`, retryDelay: `${delaySeconds}s` }],
  );
}

/** A request larger than the tokens-per-minute quota: a PerMinute input-token QuotaFailure. */
export function geminiRateWindowTooLargeResponse(): ProviderErrorResponse {
  return googleError(
    429,
    'RESOURCE_EXHAUSTED',
    `${RATE_LIMITS_HELP}\n* Quota exceeded for metric: generativelanguage.googleapis.com/` +
      'generate_content_paid_tier_input_token_count, limit: 30000, model: gemini-mock',
    [
      quotaFailure(
        'GenerateContentPaidTierInputTokensPerModelPerMinute',
        'generativelanguage.googleapis.com/generate_content_paid_tier_input_token_count',
        '30000',
      ),
    ],
  );
}

/** Out of quota for the day: gemini-cli classifies it as terminal. */
export function geminiQuotaResponse(): ProviderErrorResponse {
  return googleError(
    429,
    'RESOURCE_EXHAUSTED',
    `${RATE_LIMITS_HELP}\n* Quota exceeded for metric: generativelanguage.googleapis.com/` +
      'generate_content_free_tier_requests, limit: 250, model: gemini-mock',
    [
      quotaFailure(
        'GenerateRequestsPerDayPerProjectPerModel-FreeTier',
        'generativelanguage.googleapis.com/generate_content_free_tier_requests',
        '250',
      ),
    ],
  );
}

export function geminiServerErrorResponse(status: 500 | 502 | 503 | 529): ProviderErrorResponse {
  if (status === 500) {
    return googleError(
      500,
      'INTERNAL',
      'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
    );
  }
  if (status === 502) return googleError(502, 'UNAVAILABLE', 'Bad Gateway');
  return googleError(status, 'UNAVAILABLE', 'The model is overloaded. Please try again later.');
}

export function geminiFatalResponse(status: 400 | 401 | 403 | 404): ProviderErrorResponse {
  switch (status) {
    case 400:
      return geminiBadRequestResponse(
        '* GenerateContentRequest.generation_config.temperature: must be between 0.0 and 2.0\n',
      );
    case 401:
      return googleError(
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other ' +
          'valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
      );
    case 403:
      return googleError(403, 'PERMISSION_DENIED', 'The caller does not have permission');
    case 404:
      return googleError(
        404,
        'NOT_FOUND',
        'models/gemini-no-such-model is not found for API version v1beta, or is not supported for ' +
          'generateContent. Call ListModels to see the list of available models and their supported methods.',
      );
  }
}

export function geminiBadRequestResponse(message: string): ProviderErrorResponse {
  return googleError(400, 'INVALID_ARGUMENT', message);
}

/** What the Gemini API writes, as a bare JSON chunk, into a stream that fails after it started. */
export function geminiMidstreamErrorChunk(): string {
  return JSON.stringify(geminiServerErrorResponse(500).body);
}
