import * as Anthropic from '@anthropic-ai/sdk';
import * as OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { classifyModelError, parseRetryAfterMs } from '../src/model-call/classify-model-error.js';
import { detectTruncation } from '../src/model-call/detect-truncation.js';
import {
  DEFAULT_CAPABILITIES,
  MODEL_CAPABILITIES,
  resolveCapabilities,
} from '../src/model-call/model-capabilities.js';
import {
  estimateRequestTokens,
  estimateTokens,
  MESSAGE_OVERHEAD_TOKENS,
} from '../src/model-call/token-estimate.js';
import { ModelCallError, type ModelFailure, type ModelResponse } from '../src/model-call/types.js';

const FAILURE_CLASS = {
  transient: 'transient',
  fatal: 'fatal',
  input_overflow: 'invalid',
  output_overflow: 'invalid',
} as const;

type Expected = Pick<ModelFailure, 'kind' | 'reason'> &
  Partial<Pick<ModelFailure, 'limitTokens' | 'inputTokens' | 'requestedOutputTokens'>>;

/** An OpenAI SDK error as the SDK builds it from a response (body `{ error: { message, type, code } }`). */
function openaiError(status: number, error: Record<string, unknown>, headers: Record<string, string> = {}) {
  return OpenAI.APIError.generate(status, { error }, undefined, new Headers(headers));
}

/** An Anthropic SDK error (body `{ type: 'error', error: { type, message } }`). */
function anthropicError(status: number | undefined, type: string, message: string) {
  const body = { type: 'error', error: { type, message } };
  if (status === undefined) return new Anthropic.APIError(undefined, body, undefined, undefined);
  return Anthropic.APIError.generate(status, body, undefined, new Headers());
}

/** The shape an adapter hands over. */
function callError(message: string, fields: ConstructorParameters<typeof ModelCallError>[1] = {}) {
  return new ModelCallError(message, fields);
}

/** An AWS SDK v3 Bedrock exception. */
function bedrockError(message: string) {
  return Object.assign(new Error(message), {
    name: 'ValidationException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
  });
}

function nodeError(code: string, message = `read ${code}`) {
  return Object.assign(new Error(message), { code });
}

const OVERFLOW_CORPUS: ReadonlyArray<readonly [string, unknown, Expected]> = [
  [
    'OpenAI: messages alone too long',
    openaiError(400, {
      message:
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
    }),
    { kind: 'input_overflow', reason: 'context_overflow', limitTokens: 128000, inputTokens: 130000 },
  ],
  [
    'OpenAI: messages + completion, messages fit',
    openaiError(400, {
      message:
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (5000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.",
      code: 'context_length_exceeded',
    }),
    {
      kind: 'output_overflow',
      reason: 'context_overflow',
      limitTokens: 8192,
      inputTokens: 5000,
      requestedOutputTokens: 4000,
    },
  ],
  [
    'OpenAI: messages + completion, messages alone over the limit',
    openaiError(400, {
      message:
        "This model's maximum context length is 8192 tokens. However, you requested 9300 tokens (8300 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
      code: 'context_length_exceeded',
    }),
    {
      kind: 'input_overflow',
      reason: 'context_overflow',
      limitTokens: 8192,
      inputTokens: 8300,
      requestedOutputTokens: 1000,
    },
  ],
  [
    'OpenAI: with functions',
    openaiError(400, {
      message:
        "This model's maximum context length is 8192 tokens. However, you requested 8213 tokens (6683 in the messages, 730 in the functions, and 800 in the completion). Please reduce the length of the messages, functions, or completion.",
      code: 'context_length_exceeded',
    }),
    {
      kind: 'output_overflow',
      reason: 'context_overflow',
      limitTokens: 8192,
      inputTokens: 7413,
      requestedOutputTokens: 800,
    },
  ],
  [
    'OpenAI: legacy completions wording',
    callError(
      "This model's maximum context length is 4097 tokens, however you requested 4116 tokens (3860 in your prompt; 256 for the completion). Please reduce your prompt; or completion length.",
      { status: 400 },
    ),
    {
      kind: 'output_overflow',
      reason: 'context_overflow',
      limitTokens: 4097,
      inputTokens: 3860,
      requestedOutputTokens: 256,
    },
  ],
  [
    'OpenAI Responses: input exceeds the context window',
    callError(
      'Your input exceeds the context window of this model. Please adjust your input and try again.',
      {
        status: 400,
        code: 'context_length_exceeded',
      },
    ),
    { kind: 'input_overflow', reason: 'context_overflow' },
  ],
  [
    'OpenAI: max_tokens above the model output ceiling',
    openaiError(400, {
      message:
        'max_tokens is too large: 6000. This model supports at most 4096 completion tokens, whereas you provided 6000.',
      type: 'invalid_request_error',
      code: null,
    }),
    { kind: 'output_overflow', reason: 'context_overflow', requestedOutputTokens: 6000 },
  ],
  [
    'Azure OpenAI: messages + completion',
    callError(
      "This model's maximum context length is 32768 tokens. However, you requested 35969 tokens (9969 in the messages, 26000 in the completion). Please reduce the length of the messages or completion.",
      { status: 400, code: 'context_length_exceeded', type: 'invalid_request_error' },
    ),
    {
      kind: 'output_overflow',
      reason: 'context_overflow',
      limitTokens: 32768,
      inputTokens: 9969,
      requestedOutputTokens: 26000,
    },
  ],
  [
    'Azure OpenAI: code and reduce-length text only',
    callError('Please reduce the length of the messages or completion.', {
      status: 400,
      code: 'context_length_exceeded',
    }),
    { kind: 'input_overflow', reason: 'context_overflow' },
  ],
  [
    'Anthropic: prompt is too long',
    anthropicError(400, 'invalid_request_error', 'prompt is too long: 208000 tokens > 200000 maximum'),
    { kind: 'input_overflow', reason: 'context_overflow', limitTokens: 200000, inputTokens: 208000 },
  ],
  [
    'Anthropic: numbers with thousands separators',
    callError('prompt is too long: 242,201 tokens > 200,000 maximum', { status: 400 }),
    { kind: 'input_overflow', reason: 'context_overflow', limitTokens: 200000, inputTokens: 242201 },
  ],
  [
    'Anthropic: 413 request_too_large',
    anthropicError(413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.'),
    { kind: 'input_overflow', reason: 'request_too_large' },
  ],
  [
    'Anthropic: input + max_tokens exceed the context limit',
    anthropicError(
      400,
      'invalid_request_error',
      'input length and `max_tokens` exceed context limit: 150000 + 64000 > 200000, decrease input length or `max_tokens` and try again',
    ),
    {
      kind: 'output_overflow',
      reason: 'context_overflow',
      limitTokens: 200000,
      inputTokens: 150000,
      requestedOutputTokens: 64000,
    },
  ],
  [
    'Bedrock: input is too long',
    bedrockError('Input is too long for requested model.'),
    { kind: 'input_overflow', reason: 'context_overflow' },
  ],
  [
    'Bedrock: too many input tokens',
    bedrockError(
      '400 Bad Request: Too many input tokens. Max input tokens: 8192, request input token count: 9279 ',
    ),
    { kind: 'input_overflow', reason: 'context_overflow', limitTokens: 8192, inputTokens: 9279 },
  ],
  [
    'Bedrock: Anthropic prompt is too long',
    bedrockError(
      'The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum',
    ),
    { kind: 'input_overflow', reason: 'context_overflow', limitTokens: 200000, inputTokens: 200049 },
  ],
  [
    'Gemini: input token count',
    callError('The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).', {
      status: 400,
    }),
    { kind: 'input_overflow', reason: 'context_overflow', limitTokens: 1048576, inputTokens: 1200000 },
  ],
  [
    'vLLM: messages alone too long',
    callError(
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens in the messages, Please reduce the length of the messages.",
      { status: 400 },
    ),
    { kind: 'input_overflow', reason: 'context_overflow', limitTokens: 4096, inputTokens: 5000 },
  ],
  [
    'vLLM: messages + completion',
    callError(
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (3000 in the messages, 2000 in the completion). Please reduce the length of the messages or completion.",
      { status: 400 },
    ),
    {
      kind: 'output_overflow',
      reason: 'context_overflow',
      limitTokens: 4096,
      inputTokens: 3000,
      requestedOutputTokens: 2000,
    },
  ],
  [
    'vLLM: request has N input tokens',
    callError(
      "This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages.",
      { status: 400 },
    ),
    { kind: 'input_overflow', reason: 'context_overflow', limitTokens: 32768, inputTokens: 40000 },
  ],
  [
    'vLLM: max_tokens or max_completion_tokens is too large',
    callError(
      "'max_tokens' or 'max_completion_tokens' is too large: 2000. This model's maximum context length is 4096 tokens and your request has 2104 input tokens (2000 > 4096 - 2104).",
      { status: 400 },
    ),
    {
      kind: 'output_overflow',
      reason: 'context_overflow',
      limitTokens: 4096,
      inputTokens: 2104,
      requestedOutputTokens: 2000,
    },
  ],
  [
    'vLLM: max_tokens must be at least 1',
    callError('max_tokens must be at least 1, got -5.', { status: 400 }),
    { kind: 'input_overflow', reason: 'context_overflow' },
  ],
  [
    'OpenRouter: no breakdown',
    callError(
      "This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens",
      {
        status: 400,
      },
    ),
    { kind: 'input_overflow', reason: 'context_overflow', limitTokens: 200000 },
  ],
  [
    'OpenRouter: text input + output',
    callError(
      'This endpoint\'s maximum context length is 131072 tokens. However, you requested about 141607 tokens (10535 of text input, 131072 in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
      { status: 400 },
    ),
    {
      kind: 'output_overflow',
      reason: 'context_overflow',
      limitTokens: 131072,
      inputTokens: 10535,
      requestedOutputTokens: 131072,
    },
  ],
  [
    'OpenRouter: text + tool input + output',
    callError(
      "This endpoint's maximum context length is 204800 tokens. However, you requested about 250598 tokens (230395 of text input, 4203 of tool input, 16000 in the output).",
      { status: 400 },
    ),
    {
      kind: 'input_overflow',
      reason: 'context_overflow',
      limitTokens: 204800,
      inputTokens: 234598,
      requestedOutputTokens: 16000,
    },
  ],
  [
    'Mistral: prompt contains N tokens',
    callError(
      'Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length',
      { status: 400, type: 'invalid_request_invalid_args', code: '3051' },
    ),
    { kind: 'input_overflow', reason: 'context_overflow', limitTokens: 32768, inputTokens: 40000 },
  ],
  [
    'Ollama: input length exceeds the context length',
    callError('the input length exceeds the context length', { status: 400 }),
    { kind: 'input_overflow', reason: 'context_overflow' },
  ],
  [
    'Ollama: prompt too long; exceeded max context length',
    callError('prompt too long; exceeded max context length by 4096 tokens', { status: 400 }),
    { kind: 'input_overflow', reason: 'context_overflow' },
  ],
];

const TRANSIENT_AND_FATAL_CORPUS: ReadonlyArray<readonly [string, unknown, Expected]> = [
  [
    'OpenAI 429 rate limit',
    openaiError(429, {
      message:
        'Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s.',
      type: 'tokens',
      code: 'rate_limit_exceeded',
    }),
    { kind: 'transient', reason: 'rate_limited' },
  ],
  [
    'OpenAI free-tier rate limit (a billing link is not a billing error)',
    openaiError(429, {
      message:
        'Rate limit reached for default-gpt-3.5-turbo in organization org-x on requests per min. Limit: 3 / min. Please add a payment method to your account to increase your rate limit. Visit https://platform.openai.com/account/billing to add a payment method.',
      type: 'requests',
      code: 'rate_limit_exceeded',
    }),
    { kind: 'transient', reason: 'rate_limited' },
  ],
  [
    'OpenAI 429 request larger than the TPM window',
    openaiError(429, {
      message:
        'Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 45000. The input or output tokens must be reduced in order to run successfully.',
      type: 'tokens',
      code: 'rate_limit_exceeded',
    }),
    { kind: 'fatal', reason: 'rate_window_too_large' },
  ],
  [
    'OpenAI 429 insufficient_quota',
    openaiError(
      429,
      {
        message: 'You exceeded your current quota, please check your plan and billing details.',
        type: 'insufficient_quota',
        code: 'insufficient_quota',
      },
      { 'x-should-retry': 'true' },
    ),
    { kind: 'fatal', reason: 'quota_exhausted' },
  ],
  [
    'Anthropic credit balance too low (a 400)',
    anthropicError(
      400,
      'invalid_request_error',
      'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
    ),
    { kind: 'fatal', reason: 'quota_exhausted' },
  ],
  [
    'OpenRouter 402',
    callError('This request requires more credits, or fewer max_tokens.', { status: 402 }),
    { kind: 'fatal', reason: 'quota_exhausted' },
  ],
  [
    'Anthropic 529 overloaded',
    anthropicError(529, 'overloaded_error', 'Overloaded'),
    { kind: 'transient', reason: 'overloaded' },
  ],
  [
    'Anthropic overloaded_error mid-stream (no status)',
    anthropicError(undefined, 'overloaded_error', 'Overloaded'),
    { kind: 'transient', reason: 'overloaded' },
  ],
  [
    'Anthropic 500 api_error',
    anthropicError(500, 'api_error', 'Internal server error'),
    { kind: 'transient', reason: 'server_error' },
  ],
  [
    'OpenAI 503',
    openaiError(503, { message: 'The engine is currently overloaded' }),
    { kind: 'transient', reason: 'server_error' },
  ],
  ['408', callError('Request Timeout', { status: 408 }), { kind: 'transient', reason: 'timeout' }],
  ['409', callError('Conflict', { status: 409 }), { kind: 'transient', reason: 'conflict' }],
  [
    'OpenAI APIConnectionTimeoutError',
    new OpenAI.APIConnectionTimeoutError(),
    { kind: 'transient', reason: 'timeout' },
  ],
  [
    'Anthropic APIConnectionTimeoutError',
    new Anthropic.APIConnectionTimeoutError(),
    { kind: 'transient', reason: 'timeout' },
  ],
  [
    'OpenAI APIConnectionError over ECONNRESET',
    new OpenAI.APIConnectionError({
      cause: new TypeError('fetch failed', { cause: nodeError('ECONNRESET') }),
    }),
    { kind: 'transient', reason: 'connection' },
  ],
  [
    'ModelCallError timedOut',
    callError('aborted after 60000 ms', { timedOut: true }),
    { kind: 'transient', reason: 'timeout' },
  ],
  [
    'AbortSignal.timeout reason',
    new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
    { kind: 'transient', reason: 'timeout' },
  ],
  [
    'AbortError caused by a timeout',
    Object.assign(new Error('This operation was aborted'), {
      name: 'AbortError',
      cause: new DOMException('signal timed out', 'TimeoutError'),
    }),
    { kind: 'transient', reason: 'timeout' },
  ],
  [
    'AbortError from the caller',
    new DOMException('This operation was aborted', 'AbortError'),
    { kind: 'fatal', reason: 'aborted' },
  ],
  ['ECONNRESET', nodeError('ECONNRESET'), { kind: 'transient', reason: 'connection' }],
  [
    'ECONNREFUSED',
    nodeError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:8000'),
    { kind: 'transient', reason: 'connection' },
  ],
  ['ETIMEDOUT', nodeError('ETIMEDOUT'), { kind: 'transient', reason: 'timeout' }],
  ['EPIPE', nodeError('EPIPE', 'write EPIPE'), { kind: 'transient', reason: 'connection' }],
  [
    'EAI_AGAIN',
    nodeError('EAI_AGAIN', 'getaddrinfo EAI_AGAIN api.openai.com'),
    { kind: 'transient', reason: 'connection' },
  ],
  [
    'UND_ERR_SOCKET',
    nodeError('UND_ERR_SOCKET', 'other side closed'),
    { kind: 'transient', reason: 'connection' },
  ],
  [
    'networkCode field',
    callError('socket closed', { networkCode: 'ECONNRESET' }),
    { kind: 'transient', reason: 'connection' },
  ],
  [
    '"Connection error." text only',
    new Error('Connection error.'),
    { kind: 'transient', reason: 'connection' },
  ],
  [
    '401',
    openaiError(401, { message: 'Incorrect API key provided', code: 'invalid_api_key' }),
    { kind: 'fatal', reason: 'auth' },
  ],
  [
    '403',
    anthropicError(403, 'permission_error', 'Your API key does not have permission'),
    { kind: 'fatal', reason: 'permission' },
  ],
  [
    '404 unknown model',
    openaiError(404, {
      message: 'The model `gpt-9` does not exist or you do not have access to it.',
      code: 'model_not_found',
    }),
    { kind: 'fatal', reason: 'model_not_found' },
  ],
  [
    '400 invalid parameter',
    openaiError(400, {
      message: "Unsupported parameter: 'temperature'",
      type: 'invalid_request_error',
      param: 'temperature',
    }),
    { kind: 'fatal', reason: 'invalid_request' },
  ],
  [
    '422 invalid parameter',
    callError('Unprocessable Entity', { status: 422 }),
    { kind: 'fatal', reason: 'invalid_request' },
  ],
  [
    'Azure content filter',
    openaiError(400, {
      message:
        "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.",
      code: 'content_filter',
    }),
    { kind: 'fatal', reason: 'content_policy' },
  ],
  [
    'x-should-retry: true on a 400',
    openaiError(400, { message: 'odd' }, { 'x-should-retry': 'true' }),
    { kind: 'transient', reason: 'should_retry' },
  ],
  [
    'x-should-retry: false on a 503',
    openaiError(503, { message: 'busy' }, { 'x-should-retry': 'false' }),
    { kind: 'fatal', reason: 'should_not_retry' },
  ],
  [
    'x-should-retry: false on an overflow',
    openaiError(
      400,
      { message: 'prompt is too long: 208000 tokens > 200000 maximum' },
      { 'x-should-retry': 'false' },
    ),
    { kind: 'input_overflow', reason: 'context_overflow', limitTokens: 200000, inputTokens: 208000 },
  ],
  [
    'mid-stream drop',
    callError('stream ended before message_stop', { midStream: true }),
    { kind: 'transient', reason: 'stream_interrupted' },
  ],
  ['an unknown Error', new Error('something odd happened'), { kind: 'fatal', reason: 'unknown' }],
  ['a thrown string', 'boom', { kind: 'fatal', reason: 'unknown' }],
  ['null', null, { kind: 'fatal', reason: 'unknown' }],
];

describe('classifyModelError', () => {
  it.each(OVERFLOW_CORPUS)('%s', (_label, error, expected) => {
    const failure = classifyModelError(error);
    expect(failure).toMatchObject(expected);
    expect(failure.failureClass).toBe('invalid');
    for (const key of ['limitTokens', 'inputTokens', 'requestedOutputTokens'] as const) {
      if (!(key in expected)) expect(failure[key], key).toBeUndefined();
    }
  });

  it.each(TRANSIENT_AND_FATAL_CORPUS)('%s', (_label, error, expected) => {
    const failure = classifyModelError(error);
    expect(failure).toMatchObject(expected);
    expect(failure.failureClass).toBe(FAILURE_CLASS[expected.kind]);
  });

  it('keeps the status, the provider code and the provider message', () => {
    const failure = classifyModelError(
      openaiError(429, { message: 'Rate limit reached', code: 'rate_limit_exceeded', type: 'tokens' }),
    );
    expect(failure).toMatchObject({
      status: 429,
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached',
    });
  });

  it('reads the message inside an Anthropic body, not the JSON dump', () => {
    const failure = classifyModelError(anthropicError(529, 'overloaded_error', 'Overloaded'));
    expect(failure.message).toBe('Overloaded');
  });

  it('cuts the message to 300 characters', () => {
    const failure = classifyModelError(new Error('x'.repeat(1000)));
    expect(failure.message).toHaveLength(300);
  });

  it('replays a mid-stream failure only when replay is safe', () => {
    const drop = callError('read ECONNRESET', { midStream: true, networkCode: 'ECONNRESET' });
    expect(classifyModelError(drop)).toMatchObject({ kind: 'transient', reason: 'connection' });
    expect(classifyModelError(drop, { replaySafe: true })).toMatchObject({ kind: 'transient' });
    expect(classifyModelError(drop, { replaySafe: false })).toMatchObject({
      kind: 'fatal',
      reason: 'mid_stream_not_replay_safe',
      failureClass: 'fatal',
    });
    const notMidStream = callError('read ECONNRESET', { networkCode: 'ECONNRESET' });
    expect(classifyModelError(notMidStream, { replaySafe: false })).toMatchObject({ kind: 'transient' });
  });
});

describe('retry-after', () => {
  const now = Date.parse('2025-06-01T12:00:00Z');

  it.each([
    [{ 'retry-after-ms': '1500.5', 'retry-after': '30' }, undefined, 1500.5],
    [{ 'retry-after': '30' }, undefined, 30_000],
    [{ 'retry-after': '1.5' }, undefined, 1_500],
    [{ 'retry-after': 'Sun, 01 Jun 2025 12:00:45 GMT' }, now, 45_000],
    [{ 'retry-after': 'Sun, 01 Jun 2025 11:59:00 GMT' }, now, 0],
    [{ 'retry-after': 'Sun, 01 Jun 2025 12:00:45 GMT' }, undefined, undefined],
    [{ 'retry-after-ms': 'soon', 'retry-after': '2' }, undefined, 2_000],
    [{ 'retry-after': 'whenever' }, now, undefined],
    [{}, now, undefined],
  ])('%j (now %s) → %s ms', (headers, at, expected) => {
    expect(parseRetryAfterMs(headers, at)).toBe(expected);
  });

  it('prefers retry-after-ms and is not capped', () => {
    const headers = { 'retry-after-ms': '900000', 'retry-after': '1' };
    expect(classifyModelError(callError('slow down', { status: 429, headers })).retryAfterMs).toBe(900_000);
  });

  it('reads an SDK Headers object and an HTTP date against the given now', () => {
    const error = openaiError(
      429,
      { message: 'Rate limit reached' },
      { 'Retry-After': 'Sun, 01 Jun 2025 12:01:00 GMT' },
    );
    expect(classifyModelError(error, { now }).retryAfterMs).toBe(60_000);
    expect(classifyModelError(error).retryAfterMs).toBeUndefined();
  });
});

function response(patch: Partial<ModelResponse>): ModelResponse {
  return {
    text: '',
    toolCalls: [],
    finishReason: 'stop',
    rawFinishReason: 'stop',
    usage: { inputTokens: 100, outputTokens: 50 },
    headers: {},
    model: 'gpt-4o',
    ...patch,
  };
}

const call = (argumentsText: string) => ({ id: 'call_1', name: 'read_file', argumentsText });

describe('detectTruncation', () => {
  it.each([
    ['a clean stop', response({}), null],
    [
      'finish length',
      response({ finishReason: 'length', rawFinishReason: 'length' }),
      { reason: 'finish_length', toolCall: false },
    ],
    [
      'finish length inside a tool call',
      response({ finishReason: 'length', rawFinishReason: 'length', toolCalls: [call('{"path": "src/')] }),
      { reason: 'finish_length', toolCall: true },
    ],
    [
      'Anthropic max_tokens passed through as other',
      response({ finishReason: 'other', rawFinishReason: 'max_tokens' }),
      { reason: 'finish_length', toolCall: false },
    ],
    [
      'output at the budget with a stop reason',
      response({ usage: { inputTokens: 10, outputTokens: 1000 } }),
      { reason: 'output_at_limit', toolCall: false },
    ],
    [
      'output at the budget on a tool_use turn',
      response({
        finishReason: 'tool_calls',
        rawFinishReason: 'tool_use',
        usage: { inputTokens: 10, outputTokens: 1000 },
      }),
      { reason: 'output_at_limit', toolCall: true },
    ],
    [
      'tool arguments cut mid-JSON',
      response({
        finishReason: 'tool_calls',
        rawFinishReason: 'tool_calls',
        toolCalls: [call('{"path": "a')],
      }),
      { reason: 'tool_arguments_invalid_json', toolCall: true },
    ],
    [
      'tool arguments that are an array',
      response({ toolCalls: [call('[1, 2]')] }),
      { reason: 'tool_arguments_invalid_json', toolCall: true },
    ],
    [
      'tool arguments that are null',
      response({ toolCalls: [call('null')] }),
      { reason: 'tool_arguments_invalid_json', toolCall: true },
    ],
    ['empty arguments count as {}', response({ finishReason: 'tool_calls', toolCalls: [call('')] }), null],
    [
      'valid object arguments',
      response({ finishReason: 'tool_calls', toolCalls: [call('{"path":"a.ts"}')] }),
      null,
    ],
  ])('%s', (_label, answer, expected) => {
    expect(detectTruncation(answer, { maxOutputTokens: 1000 })).toEqual(expected);
  });
});

describe('resolveCapabilities', () => {
  it.each([
    ['gpt-4o', 128_000, 16_384],
    ['gpt-4o-2024-08-06', 128_000, 16_384],
    ['gpt-4.1-mini-2025-04-14', 1_047_576, 32_768],
    ['o3-mini-2025-01-31', 200_000, 100_000],
    ['gpt-5-mini', 400_000, 128_000],
    ['claude-sonnet-4-5-20250929', 200_000, 64_000],
    ['claude-opus-4-1-20250805', 200_000, 32_000],
    ['claude-opus-4-5-20251101', 200_000, 64_000],
    ['claude-3-5-haiku-latest', 200_000, 8_192],
    ['openai/gpt-4o', 128_000, 16_384],
    ['llama3.1:8b', 4_096, 2_048],
  ])('%s → window %i, output %i', (model, contextWindow, maxOutputTokens) => {
    expect(resolveCapabilities(model)).toEqual({ contextWindow, maxOutputTokens, supportsTools: true });
  });

  it('uses the documented default for unknown models, and a prefix must end at a separator', () => {
    expect(DEFAULT_CAPABILITIES).toEqual({ contextWindow: 8192, maxOutputTokens: 4096, supportsTools: true });
    expect(resolveCapabilities('my-local-model')).toEqual(DEFAULT_CAPABILITIES);
    expect(resolveCapabilities('gpt-4oz')).toEqual(DEFAULT_CAPABILITIES);
  });

  it('lets overrides win, field by field, exact name before prefix', () => {
    const overrides = {
      'llama3.1': { contextWindow: 32_768 },
      'llama3.1:70b': { contextWindow: 65_536, maxOutputTokens: 8_192 },
      'my-local-model': { supportsTools: false },
    };
    expect(resolveCapabilities('llama3.1:8b', overrides)).toEqual({
      contextWindow: 32_768,
      maxOutputTokens: 2_048,
      supportsTools: true,
    });
    expect(resolveCapabilities('llama3.1:70b', overrides)).toMatchObject({
      contextWindow: 65_536,
      maxOutputTokens: 8_192,
    });
    expect(resolveCapabilities('my-local-model', overrides)).toEqual({
      ...DEFAULT_CAPABILITIES,
      supportsTools: false,
    });
  });

  it('returns a copy: the table cannot be changed through a result', () => {
    resolveCapabilities('gpt-4o').contextWindow = 1;
    expect(MODEL_CAPABILITIES['gpt-4o']?.contextWindow).toBe(128_000);
  });
});

describe('token estimates', () => {
  it('counts ceil(chars / 4)', () => {
    expect([estimateTokens(''), estimateTokens('abcd'), estimateTokens('abcde')]).toEqual([0, 1, 2]);
  });

  it('splits a request into system, messages and tools with a per-message overhead', () => {
    const parameters = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    const estimate = estimateRequestTokens({
      messages: [
        { role: 'system', content: 'x'.repeat(40) },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: '', toolCalls: [call('{"path":"a"}')] },
        { role: 'tool', toolCallId: 'call_1', name: 'read_file', content: 'ok' },
      ],
      tools: [{ name: 'read_file', description: 'Read a file', parameters }],
    });
    const o = MESSAGE_OVERHEAD_TOKENS;
    const system = o + 10;
    const messages = o + 1 + (o + 0 + o + 3 + 3) + (o + 1 + 3);
    const tools = o + 3 + 3 + estimateTokens(JSON.stringify(parameters));
    expect(estimate).toEqual({ total: system + messages + tools, system, messages, tools });
  });

  it('works without tools', () => {
    expect(estimateRequestTokens({ messages: [{ role: 'user', content: 'abcd' }] })).toEqual({
      total: MESSAGE_OVERHEAD_TOKENS + 1,
      system: 0,
      messages: MESSAGE_OVERHEAD_TOKENS + 1,
      tools: 0,
    });
  });
});
