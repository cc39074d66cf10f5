/**
 * Real context-overflow answers, one per provider, as data. Each entry names where the text was
 * seen; the numbers are the ones in that report (or the brief's example numbers), not computed.
 * `_output` flavours are the "input + requested output exceed the window" variants.
 */

export const OVERFLOW_FLAVOURS = [
  'openai',
  'openai_output',
  'azure',
  'anthropic',
  'anthropic_413',
  'anthropic_output',
  'bedrock',
  'gemini',
  'vllm',
  'vllm_output',
  'openrouter',
  'mistral',
  'ollama',
] as const;

export type OverflowFlavour = (typeof OVERFLOW_FLAVOURS)[number];

/** A provider's error answer: status, extra headers and the JSON body, sent as is. */
export interface ProviderErrorResponse {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export const OVERFLOW_RESPONSES: Readonly<Record<OverflowFlavour, ProviderErrorResponse>> = {
  // OpenAI Chat Completions, input alone too long (e.g. openai issue reports in
  // crewAIInc/crewAI-examples#121, assafelovic/gpt-researcher#680).
  openai: {
    status: 400,
    body: {
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in " +
          '130000 tokens. Please reduce the length of the messages.',
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    },
  },
  // OpenAI, input + max_tokens too long (Chanzhaoyu/chatgpt-web#354, mckaywrigley/chatbot-ui#820).
  openai_output: {
    status: 400,
    body: {
      error: {
        message:
          "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens " +
          '(5000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.',
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    },
  },
  // Azure OpenAI: the OpenAI body behind Azure's gateway headers (microsoft/kernel-memory#516:
  // "Status: 400 (model_error) ErrorCode: context_length_exceeded").
  azure: {
    status: 400,
    headers: { 'apim-request-id': '00000000-0000-4000-8000-000000000000', 'x-ms-region': 'East US' },
    body: {
      error: {
        message:
          "This model's maximum context length is 8192 tokens. However, your messages resulted in " +
          '10383 tokens. Please reduce the length of the messages.',
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    },
  },
  // Anthropic Messages, input alone too long (boldsoftware/exe.dev#62, earendil-works/pi#102).
  anthropic: {
    status: 400,
    body: {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 208000 tokens > 200000 maximum' },
    },
  },
  // Anthropic, request body over the byte limit, answered before the model sees it
  // (anthropics/claude-code#14567, anthropics/anthropic-sdk-python#938): no top-level `type`.
  anthropic_413: {
    status: 413,
    body: { error: { type: 'request_too_large', message: 'Request exceeds the maximum size' } },
  },
  // Anthropic, input + max_tokens too long (docker/docker-agent#569, continuedev/continue#6080).
  anthropic_output: {
    status: 400,
    body: {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          'input length and `max_tokens` exceed context limit: 150000 + 64000 > 200000, ' +
          'decrease input length or `max_tokens` and try again',
      },
    },
  },
  // AWS Bedrock runtime ValidationException: the body is a bare `message`, the kind is in a header
  // (aws-samples/assessment-generator#2, aws-samples/bedrock-chat#95).
  bedrock: {
    status: 400,
    headers: {
      'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/',
    },
    body: { message: 'Input is too long for requested model.' },
  },
  // Google Gemini, google.rpc.Status JSON (google-gemini/gemini-cli#6678).
  gemini: {
    status: 400,
    body: {
      error: {
        code: 400,
        message: 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).',
        status: 'INVALID_ARGUMENT',
      },
    },
  },
  // vLLM OpenAI-compatible server, flat body (vllm 0.9 entrypoints/openai/serving_engine.py, quoted
  // in tests of downstream clients), messages alone too long.
  vllm: {
    status: 400,
    body: {
      object: 'error',
      message:
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens in the " +
        'messages, Please reduce the length of the messages.',
      type: 'BadRequestError',
      param: null,
      code: 400,
    },
  },
  // vLLM, messages + max_tokens too long (vllm-project/vllm#20409, ogx-ai/ogx#4534).
  vllm_output: {
    status: 400,
    body: {
      object: 'error',
      message:
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens " +
        '(3000 in the messages, 2000 in the completion). Please reduce the length of the messages or completion.',
      type: 'BadRequestError',
      param: null,
      code: 400,
    },
  },
  // OpenRouter (Aider-AI/aider#3721, OpenHands/OpenHands#9937): numeric code and provider metadata.
  openrouter: {
    status: 400,
    body: {
      error: {
        message:
          "This endpoint's maximum context length is 131072 tokens. However, you requested about 141607 " +
          'tokens (10535 of text input, 131072 in the output). Please reduce the length of either one, ' +
          'or use the "middle-out" transform to compress your prompt automatically.',
        code: 400,
        metadata: { provider_name: 'Chutes' },
      },
    },
  },
  // Mistral La Plateforme, flat body with a string code (seen verbatim in client test fixtures of
  // Mistral's API: "Prompt contains N tokens and 0 draft tokens, too large for model with ...").
  mistral: {
    status: 400,
    body: {
      object: 'error',
      message:
        'Prompt contains 170397 tokens and 0 draft tokens, too large for model with 131072 maximum context length',
      type: 'invalid_request_invalid_args',
      param: null,
      code: '3051',
      raw_status_code: 400,
    },
  },
  // Ollama's OpenAI-compatible endpoint: the runner's "prompt too long" text in Ollama's
  // OpenAI-style error wrapper (message quoted in many overflow classifiers' tests).
  ollama: {
    status: 400,
    body: {
      error: {
        message: 'prompt too long; exceeded max context length by 4096 tokens',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    },
  },
};
