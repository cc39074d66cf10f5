import { type CompletionPlan, splitForStream } from './completion-plan.js';
import { sseFrame } from './http-io.js';
import { asRecord, summarizeUserText } from './request-text.js';
import { DEFAULT_MAX_TOKENS, type MockRequest, type ResponseContext } from './types.js';

/**
 * Anthropic Messages (`POST /v1/messages`): request parsing and response rendering.
 *
 * A non-streaming `tool_use` block carries `input` as an object, so a cut arguments text cannot be
 * shown there: a cut call is sent with `input: {}` (and the plan's stop reason, `max_tokens` for
 * truncate_tool). Streaming sends the cut text itself as `input_json_delta` pieces.
 */

export function parseAnthropicRequest(body: Record<string, unknown>, path = '/v1/messages'): MockRequest {
  const declared = Array.isArray(body.tools) ? body.tools : [];
  const tools = declared.flatMap((raw) => {
    const tool = asRecord(raw);
    return tool && typeof tool.name === 'string' && tool.input_schema !== undefined
      ? [{ name: tool.name, parameters: tool.input_schema }]
      : [];
  });
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const userContents = messages.flatMap((m) => (asRecord(m)?.role === 'user' ? [asRecord(m)?.content] : []));
  return {
    wire: 'anthropic',
    model: typeof body.model === 'string' ? body.model : '',
    path,
    messages,
    tools,
    toolCount: declared.length,
    maxTokens:
      typeof body.max_tokens === 'number' && body.max_tokens > 0 ? body.max_tokens : DEFAULT_MAX_TOKENS,
    stream: body.stream === true,
    ...summarizeUserText(userContents),
    hasToolResult: userContents.some(
      (content) => Array.isArray(content) && content.some((block) => asRecord(block)?.type === 'tool_result'),
    ),
    toolResultText: userContents
      .flatMap((content) => (Array.isArray(content) ? content : []))
      .map(asRecord)
      .filter((block) => block?.type === 'tool_result')
      .map((block) => toolResultContent(block?.content))
      .join('\n'),
    body,
  };
}

/** A tool_result's content: a string, or its text blocks. */
function toolResultContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => asRecord(part))
    .flatMap((block) => (block && typeof block.text === 'string' ? [block.text] : []))
    .join('\n');
}

const STOP_REASONS = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' } as const;

function messageId(ctx: ResponseContext): string {
  return `msg_mock${String(ctx.seq).padStart(6, '0')}`;
}

function toolUseId(ctx: ResponseContext, index: number): string {
  return `toolu_mock${String(ctx.seq).padStart(6, '0')}_${index}`;
}

function inputObject(argumentsText: string): Record<string, unknown> {
  try {
    return asRecord(JSON.parse(argumentsText)) ?? {};
  } catch {
    return {};
  }
}

export function renderAnthropicMessage(plan: CompletionPlan, ctx: ResponseContext): unknown {
  const content: unknown[] = [];
  if (plan.text !== '' || plan.toolCalls.length === 0) content.push({ type: 'text', text: plan.text });
  plan.toolCalls.forEach((call, index) => {
    content.push({
      type: 'tool_use',
      id: toolUseId(ctx, index),
      name: call.name,
      input: call.cut ? {} : inputObject(call.argumentsText),
    });
  });
  return {
    id: messageId(ctx),
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: STOP_REASONS[plan.finish],
    stop_sequence: null,
    usage: { input_tokens: plan.inputTokens, output_tokens: plan.outputTokens },
  };
}

/**
 * The SSE frames of a streamed message: message_start, then per block content_block_start,
 * content_block_delta (text_delta / input_json_delta) and content_block_stop, then message_delta
 * (stop_reason, usage.output_tokens) and message_stop.
 */
export function anthropicStreamFrames(plan: CompletionPlan, ctx: ResponseContext): string[] {
  const event = (type: string, data: Record<string, unknown>) => sseFrame({ type, ...data }, type);
  const frames = [
    event('message_start', {
      message: {
        id: messageId(ctx),
        type: 'message',
        role: 'assistant',
        model: ctx.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: plan.inputTokens, output_tokens: 1 },
      },
    }),
  ];
  let index = 0;
  if (plan.text !== '' || plan.toolCalls.length === 0) {
    frames.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    for (const text of splitForStream(plan.text)) {
      frames.push(event('content_block_delta', { index, delta: { type: 'text_delta', text } }));
    }
    frames.push(event('content_block_stop', { index }));
    index += 1;
  }
  plan.toolCalls.forEach((call, callIndex) => {
    const block = { type: 'tool_use', id: toolUseId(ctx, callIndex), name: call.name, input: {} };
    frames.push(event('content_block_start', { index, content_block: block }));
    for (const partial_json of splitForStream(call.argumentsText)) {
      frames.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }));
    }
    frames.push(event('content_block_stop', { index }));
    index += 1;
  });
  frames.push(
    event('message_delta', {
      delta: { stop_reason: STOP_REASONS[plan.finish], stop_sequence: null },
      usage: { output_tokens: plan.outputTokens },
    }),
  );
  frames.push(event('message_stop', {}));
  return frames;
}
