import Anthropic from '@anthropic-ai/sdk';
import type {
  ContentBlockParam,
  MessageCreateParamsBase,
  RawMessageStreamEvent,
} from '@anthropic-ai/sdk/resources/messages/messages';
import type {
  FinishReason,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ProviderCallOptions,
  ToolCall,
} from '../types.js';
import { toAnthropicMessages } from './anthropic-messages.js';
import { headersOf, streamCut, toModelCallError } from './sdk-error.js';
import { StreamStall } from './stream-stall.js';

export interface AnthropicProviderOptions {
  /** Name used in events and config; default `anthropic`. */
  name?: string;
  apiKey?: string;
  baseURL?: string;
  /** Stream the response; default false. */
  stream?: boolean;
  /** With `stream`: a response silent this long (ms) is stopped as stalled (see stream-stall.ts). */
  stallTimeoutMs?: number;
  /** How many `pause_turn` stops are continued within one call; default 3. */
  maxPauseContinuations?: number;
}

/** Ten minutes, the Anthropic SDK's own default for a request. */
const DEFAULT_TIMEOUT_MS = 600_000;

interface Collected {
  text: string;
  blocks: ContentBlockParam[];
  toolCalls: ToolCall[];
  stopReason: string | null;
  inputTokens: number;
  outputTokens: number;
  model: string;
  headers: Record<string, string>;
}

/** An adapter over the official `@anthropic-ai/sdk` (Messages). The SDK's own retries are off. */
export function createAnthropicProvider(options: AnthropicProviderOptions = {}): ModelProvider {
  const client = new Anthropic({
    apiKey: options.apiKey ?? process.env.ANTHROPIC_API_KEY ?? 'missing-api-key',
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    maxRetries: 0,
  });
  const stream = options.stream ?? false;
  const stallMs = stream && options.stallTimeoutMs ? options.stallTimeoutMs : undefined;
  const maxPauses = options.maxPauseContinuations ?? 3;
  return {
    name: options.name ?? 'anthropic',
    kind: 'anthropic',
    async complete(request: ModelRequest, call: ProviderCallOptions = {}): Promise<ModelResponse> {
      const { system, messages } = toAnthropicMessages(request.messages);
      const body: MessageCreateParamsBase = {
        model: request.model,
        max_tokens: request.maxOutputTokens,
        messages,
        ...(system === undefined ? {} : { system }),
        ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
        ...(request.tools && request.tools.length > 0
          ? {
              tools: request.tools.map((tool) => ({
                name: tool.name,
                description: tool.description,
                input_schema: tool.parameters as { type: 'object' },
              })),
            }
          : {}),
      };
      // An explicit timeout: without one the SDK refuses non-streaming requests with a large
      // max_tokens ("Streaming is required for operations that may take longer than 10 minutes").
      const requestOptions = {
        ...(call.signal === undefined ? {} : { signal: call.signal }),
        timeout: call.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      };
      let total: Collected | null = null;
      // pause_turn: the API paused a long turn; sending its content back as the assistant turn resumes it.
      for (let pauses = 0; ; pauses++) {
        const part = stream
          ? await collectStreaming(client, body, requestOptions, stallMs)
          : await collectOnce(client, body, requestOptions);
        total = total === null ? part : merge(total, part);
        if (part.stopReason !== 'pause_turn' || pauses >= maxPauses) break;
        body.messages = [...messages, { role: 'assistant', content: total.blocks }];
      }
      return {
        text: total.text,
        toolCalls: total.toolCalls,
        finishReason: mapStopReason(total.stopReason),
        rawFinishReason: total.stopReason,
        usage: { inputTokens: total.inputTokens, outputTokens: total.outputTokens },
        headers: total.headers,
        model: total.model,
      };
    },
  };
}

async function collectOnce(
  client: Anthropic,
  body: MessageCreateParamsBase,
  requestOptions: { signal?: AbortSignal; timeout?: number },
): Promise<Collected> {
  try {
    const { data, response } = await client.messages
      .create({ ...body, stream: false }, requestOptions)
      .withResponse();
    const collected = emptyCollected(data.model, headersOf(response.headers));
    for (const block of data.content) {
      if (block.type === 'text') {
        collected.text += block.text;
        collected.blocks.push({ type: 'text', text: block.text });
      } else if (block.type === 'tool_use') {
        collected.toolCalls.push({
          id: block.id,
          name: block.name,
          argumentsText: JSON.stringify(block.input),
        });
        collected.blocks.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
      }
    }
    collected.stopReason = data.stop_reason;
    collected.inputTokens = data.usage.input_tokens;
    collected.outputTokens = data.usage.output_tokens;
    return collected;
  } catch (error) {
    throw toModelCallError(error);
  }
}

/** Streaming keeps the raw `input_json_delta` text, so a cut tool call stays visibly cut. */
async function collectStreaming(
  client: Anthropic,
  body: MessageCreateParamsBase,
  requestOptions: { signal?: AbortSignal; timeout?: number },
  stallMs: number | undefined,
): Promise<Collected> {
  let received = false;
  let stopped = false;
  // With model.stallTimeoutMs: the SDK follows the watch's signal, which follows the caller's.
  const stall = stallMs === undefined ? null : new StreamStall(stallMs, requestOptions.signal);
  const options = stall ? { ...requestOptions, signal: stall.signal } : requestOptions;
  try {
    const { data, response } = await client.messages
      .create({ ...body, stream: true }, options)
      .withResponse();
    const collected = emptyCollected(body.model, headersOf(response.headers));
    const open = new Map<number, ToolCall>();
    for await (const event of data as AsyncIterable<RawMessageStreamEvent>) {
      received = true;
      stall?.seen();
      switch (event.type) {
        case 'message_start':
          collected.model = event.message.model;
          collected.inputTokens = event.message.usage.input_tokens;
          break;
        case 'content_block_start':
          if (event.content_block.type === 'tool_use') {
            const call = { id: event.content_block.id, name: event.content_block.name, argumentsText: '' };
            open.set(event.index, call);
            collected.toolCalls.push(call);
          }
          break;
        case 'content_block_delta':
          if (event.delta.type === 'text_delta') collected.text += event.delta.text;
          else if (event.delta.type === 'input_json_delta') {
            const call = open.get(event.index);
            if (call) call.argumentsText += event.delta.partial_json;
          }
          break;
        case 'message_delta':
          collected.stopReason = event.delta.stop_reason;
          collected.outputTokens = event.usage.output_tokens;
          break;
        case 'message_stop':
          stopped = true;
          break;
        default:
          break;
      }
    }
    if (collected.stopReason === null && !stopped) throw streamCut('no message_delta or message_stop');
    if (collected.text.length > 0) collected.blocks.push({ type: 'text', text: collected.text });
    for (const call of collected.toolCalls) {
      collected.blocks.push({
        type: 'tool_use',
        id: call.id,
        name: call.name,
        input: safeParse(call.argumentsText),
      });
    }
    return collected;
  } catch (error) {
    if (stall?.stalled) throw stall.failure(error);
    throw toModelCallError(error, { midStream: received });
  } finally {
    stall?.stop();
  }
}

function safeParse(text: string): unknown {
  try {
    return text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return {};
  }
}

function emptyCollected(model: string, headers: Record<string, string>): Collected {
  return {
    text: '',
    blocks: [],
    toolCalls: [],
    stopReason: null,
    inputTokens: 0,
    outputTokens: 0,
    model,
    headers,
  };
}

function merge(a: Collected, b: Collected): Collected {
  return {
    text: a.text + b.text,
    blocks: [...a.blocks, ...b.blocks],
    toolCalls: [...a.toolCalls, ...b.toolCalls],
    stopReason: b.stopReason,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    model: b.model,
    headers: b.headers,
  };
}

function mapStopReason(reason: string | null): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'refusal';
    default:
      return 'other';
  }
}
