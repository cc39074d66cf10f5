import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type {
  ChatMessage,
  FinishReason,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ProviderCallOptions,
  ToolCall,
} from '../types.js';
import { headersOf, streamCut, toModelCallError } from './sdk-error.js';
import { StreamStall } from './stream-stall.js';

export interface OpenAiProviderOptions {
  /** Name used in events and config; default `openai`. */
  name?: string;
  apiKey?: string;
  /** Any OpenAI-compatible Chat Completions endpoint: vLLM, Ollama, LM Studio, OpenRouter, ... */
  baseURL?: string;
  /** Stream the response (recommended for long outputs); default false. */
  stream?: boolean;
  /** With `stream`: a response silent this long (ms) is stopped as stalled (see stream-stall.ts). */
  stallTimeoutMs?: number;
  /**
   * The field carrying the output budget. OpenAI's own API wants `max_completion_tokens` (reasoning
   * models refuse `max_tokens`); many compatible servers only know `max_tokens`. Default: the former
   * without a baseURL, the latter with one.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  defaultHeaders?: Record<string, string>;
}

/** An adapter over the official `openai` SDK (Chat Completions). The SDK's own retries are off. */
export function createOpenAiProvider(options: OpenAiProviderOptions = {}): ModelProvider {
  const client = new OpenAI({
    apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'missing-api-key',
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    ...(options.defaultHeaders === undefined ? {} : { defaultHeaders: options.defaultHeaders }),
    maxRetries: 0,
    fetch: fetchKeepingErrorBodies,
  });
  const maxTokensField =
    options.maxTokensField ?? (options.baseURL === undefined ? 'max_completion_tokens' : 'max_tokens');
  const stream = options.stream ?? false;
  const stallMs = stream && options.stallTimeoutMs ? options.stallTimeoutMs : undefined;
  return {
    name: options.name ?? 'openai',
    kind: 'openai',
    async complete(request: ModelRequest, call: ProviderCallOptions = {}): Promise<ModelResponse> {
      const body: ChatCompletionCreateParamsBase = {
        model: request.model,
        messages: request.messages.map(toOpenAiMessage),
        [maxTokensField]: request.maxOutputTokens,
        ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
        ...(request.tools && request.tools.length > 0
          ? {
              tools: request.tools.map((tool) => ({
                type: 'function' as const,
                function: { name: tool.name, description: tool.description, parameters: tool.parameters },
              })),
            }
          : {}),
      };
      const requestOptions = {
        ...(call.signal === undefined ? {} : { signal: call.signal }),
        ...(call.timeoutMs === undefined ? {} : { timeout: call.timeoutMs }),
      };
      if (stream) return completeStreaming(client, body, requestOptions, stallMs);
      try {
        const { data, response } = await client.chat.completions
          .create({ ...body, stream: false }, requestOptions)
          .withResponse();
        const choice = data.choices[0];
        const message = choice?.message;
        const toolCalls: ToolCall[] = [];
        for (const call of message?.tool_calls ?? []) {
          if (call.type === 'function') {
            toolCalls.push({ id: call.id, name: call.function.name, argumentsText: call.function.arguments });
          }
        }
        return {
          text: message?.content ?? '',
          toolCalls,
          finishReason: mapFinishReason(choice?.finish_reason ?? null, Boolean(message?.refusal)),
          rawFinishReason: choice?.finish_reason ?? null,
          usage: {
            inputTokens: data.usage?.prompt_tokens ?? 0,
            outputTokens: data.usage?.completion_tokens ?? 0,
          },
          headers: headersOf(response.headers),
          model: data.model,
        };
      } catch (error) {
        throw toModelCallError(error);
      }
    },
  };
}

async function completeStreaming(
  client: OpenAI,
  body: ChatCompletionCreateParamsBase,
  requestOptions: { signal?: AbortSignal; timeout?: number },
  stallMs: number | undefined,
): Promise<ModelResponse> {
  let received = false;
  // With model.stallTimeoutMs: the SDK follows the watch's signal, which follows the caller's.
  const stall = stallMs === undefined ? null : new StreamStall(stallMs, requestOptions.signal);
  const options = stall ? { ...requestOptions, signal: stall.signal } : requestOptions;
  try {
    const { data, response } = await client.chat.completions
      .create({ ...body, stream: true, stream_options: { include_usage: true } }, options)
      .withResponse();
    let text = '';
    let refusal = '';
    let finish: string | null = null;
    let model = body.model;
    const usage = { inputTokens: 0, outputTokens: 0 };
    const calls = new Map<number, ToolCall>();
    for await (const chunk of data as AsyncIterable<ChatCompletionChunk>) {
      received = true;
      stall?.seen();
      model = chunk.model || model;
      if (chunk.usage) {
        usage.inputTokens = chunk.usage.prompt_tokens;
        usage.outputTokens = chunk.usage.completion_tokens;
      }
      const choice = chunk.choices[0];
      if (!choice) continue;
      text += choice.delta.content ?? '';
      refusal += choice.delta.refusal ?? '';
      for (const delta of choice.delta.tool_calls ?? []) {
        const current = calls.get(delta.index) ?? { id: '', name: '', argumentsText: '' };
        if (delta.id) current.id = delta.id;
        if (delta.function?.name) current.name += delta.function.name;
        if (delta.function?.arguments) current.argumentsText += delta.function.arguments;
        calls.set(delta.index, current);
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    if (finish === null) throw streamCut('no chunk carried a finish_reason');
    return {
      text,
      toolCalls: [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call),
      finishReason: mapFinishReason(finish, refusal.length > 0),
      rawFinishReason: finish,
      usage,
      headers: headersOf(response.headers),
      model,
    };
  } catch (error) {
    if (stall?.stalled) throw stall.failure(error);
    throw toModelCallError(error, { midStream: received });
  } finally {
    stall?.stop();
  }
}

/**
 * The openai SDK reads an error's details only from an `{ error: {...} }` body; vLLM, Mistral and
 * other compatible servers answer `{ object: 'error', message, ... }` at the top level, which the
 * SDK reports as "(no body)". Wrapping such bodies keeps their message for classification.
 */
async function fetchKeepingErrorBodies(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  if (response.ok || !(response.headers.get('content-type') ?? '').includes('json')) return response;
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const wrapped =
    body && typeof body === 'object' && !Array.isArray(body) && !('error' in body)
      ? JSON.stringify({ error: body })
      : text;
  return new Response(wrapped, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

function mapFinishReason(reason: string | null, refused: boolean): FinishReason {
  if (refused) return 'refusal';
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'other';
  }
}

function toOpenAiMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls && message.toolCalls.length > 0
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.argumentsText },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}
