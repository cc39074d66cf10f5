import type { FailureClass } from '../core/failure.js';

/**
 * The one shape every model provider is reduced to. Adapters translate the official SDKs'
 * requests, responses and errors into these types; recovery and the agent loop see nothing else.
 */

/** Why a model stopped, unified across providers. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'refusal' | 'other';

/** A tool call as the model produced it: the arguments are the raw text, parsed only after checks. */
export interface ToolCall {
  id: string;
  name: string;
  argumentsText: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError?: boolean };

/** A tool offered to the model; `parameters` is a JSON Schema object. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** The output budget sent to the provider (`max_tokens` / `max_completion_tokens`). */
  maxOutputTokens: number;
  temperature?: number;
}

export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  /** The provider's own reason (`length`, `max_tokens`, `model_context_window_exceeded`, ...). */
  rawFinishReason: string | null;
  usage: ModelUsage;
  /** Response headers, lower-case names. */
  headers: Record<string, string>;
  /** The model that answered, as the provider reported it. */
  model: string;
}

export interface ProviderCallOptions {
  signal?: AbortSignal;
  /** Per-request timeout in milliseconds; the adapter turns a timeout into `timedOut: true`. */
  timeoutMs?: number;
}

export type ProviderKind = 'openai' | 'anthropic';

export interface ModelProvider {
  /** A name for events and config (`openai`, `anthropic`, `vllm-local`, ...). */
  readonly name: string;
  readonly kind: ProviderKind;
  /** Sends one request. Throws a {@link ModelCallError} for every failure; never retries by itself. */
  complete(request: ModelRequest, options?: ProviderCallOptions): Promise<ModelResponse>;
}

/**
 * A provider failure, normalised from the SDK's error. Structured fields come first; the message is
 * the provider's text, kept for the last-resort classification and cut before it is recorded.
 */
export class ModelCallError extends Error {
  /** HTTP status, when the provider answered. */
  readonly status: number | undefined;
  /** The provider's error code (`context_length_exceeded`, `rate_limit_exceeded`, ...). */
  readonly code: string | undefined;
  /** The provider's error type (`overloaded_error`, `invalid_request_error`, ...). */
  readonly type: string | undefined;
  /** Response headers, lower-case names (`retry-after`, `retry-after-ms`, `x-should-retry`). */
  readonly headers: Record<string, string>;
  /** A network error code from Node (`ECONNRESET`, `ETIMEDOUT`, ...). */
  readonly networkCode: string | undefined;
  readonly timedOut: boolean;
  /** The failure happened after part of a streamed response had arrived. */
  readonly midStream: boolean;

  constructor(
    message: string,
    fields: {
      status?: number | undefined;
      code?: string | undefined;
      type?: string | undefined;
      headers?: Record<string, string>;
      networkCode?: string | undefined;
      timedOut?: boolean;
      midStream?: boolean;
      cause?: unknown;
    } = {},
  ) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = 'ModelCallError';
    this.status = fields.status;
    this.code = fields.code;
    this.type = fields.type;
    this.headers = fields.headers ?? {};
    this.networkCode = fields.networkCode;
    this.timedOut = fields.timedOut ?? false;
    this.midStream = fields.midStream ?? false;
  }
}

/**
 * What a failed call means for recovery:
 * - `transient`: wait (backoff or Retry-After) and send again;
 * - `input_overflow`: the input alone does not fit the context window: compaction helps;
 * - `output_overflow`: input + requested output does not fit: a smaller output budget helps;
 * - `fatal`: nothing automatic helps (auth, unknown model, invalid request, quota, ...).
 */
export type ModelFailureKind = 'transient' | 'input_overflow' | 'output_overflow' | 'fatal';

export interface ModelFailure {
  kind: ModelFailureKind;
  /** The shared vocabulary of core/failure.ts: transient → `transient`, overflow → `invalid`, fatal → `fatal`. */
  failureClass: FailureClass;
  /** A short stable reason: `rate_limited`, `overloaded`, `server_error`, `timeout`, `connection`, ... */
  reason: string;
  status?: number;
  code?: string;
  /** The wait the provider asked for (`retry-after-ms`, then `retry-after`), uncapped. */
  retryAfterMs?: number;
  /** Numbers an overflow message carried, when it did (context limit, input tokens, requested output). */
  limitTokens?: number;
  inputTokens?: number;
  requestedOutputTokens?: number;
  message: string;
}

/** Context window, output ceiling and tool support of one model. */
export interface ModelCapabilities {
  contextWindow: number;
  maxOutputTokens: number;
  supportsTools: boolean;
}

/** Why a response is not trusted as complete. */
type TruncationReason = 'finish_length' | 'output_at_limit' | 'tool_arguments_invalid_json';

export interface Truncation {
  reason: TruncationReason;
  /** A tool call was cut: it is never executed nor continued, only regenerated. */
  toolCall: boolean;
}
