import { type CompletionPlan, splitForStream } from './completion-plan.js';
import { sseFrame } from './http-io.js';
import { asRecord, summarizeUserText } from './request-text.js';
import { DEFAULT_MAX_TOKENS, type MockRequest, type ResponseContext } from './types.js';

/** OpenAI Chat Completions (`POST /v1/chat/completions`): request parsing and response rendering. */

/** The JSON Schema of `response_format` (json_schema → its schema, json_object → {}), if JSON is asked for. */
function outputSchemaOf(body: Record<string, unknown>): unknown {
  const format = asRecord(body.response_format);
  if (format?.type === 'json_object') return {};
  if (format?.type === 'json_schema') return asRecord(format.json_schema)?.schema ?? {};
  return undefined;
}

export function parseOpenaiRequest(
  body: Record<string, unknown>,
  path = '/v1/chat/completions',
): MockRequest {
  const declared = Array.isArray(body.tools) ? body.tools : [];
  const tools = declared.flatMap((raw) => {
    const fn = asRecord(asRecord(raw)?.function);
    return fn && typeof fn.name === 'string' ? [{ name: fn.name, parameters: fn.parameters ?? {} }] : [];
  });
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const records = messages.map((m) => asRecord(m));
  const max = body.max_completion_tokens ?? body.max_tokens;
  return {
    wire: 'openai',
    model: typeof body.model === 'string' ? body.model : '',
    path,
    messages,
    tools,
    toolCount: declared.length,
    maxTokens: typeof max === 'number' && max > 0 ? max : DEFAULT_MAX_TOKENS,
    stream: body.stream === true,
    ...summarizeUserText(records.filter((m) => m?.role === 'user').map((m) => m?.content)),
    hasToolResult: records.some((m) => m?.role === 'tool' || m?.role === 'function'),
    outputSchema: outputSchemaOf(body),
    body,
  };
}

function completionId(ctx: ResponseContext): string {
  return `chatcmpl-mock${String(ctx.seq).padStart(6, '0')}`;
}

function toolCallId(ctx: ResponseContext, index: number): string {
  return `call_mock${String(ctx.seq).padStart(6, '0')}_${index}`;
}

function usage(plan: CompletionPlan) {
  return {
    prompt_tokens: plan.inputTokens,
    completion_tokens: plan.outputTokens,
    total_tokens: plan.inputTokens + plan.outputTokens,
  };
}

export function renderOpenaiCompletion(plan: CompletionPlan, ctx: ResponseContext): unknown {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: plan.text === '' && plan.toolCalls.length > 0 ? null : plan.text,
    refusal: null,
  };
  if (plan.toolCalls.length > 0) {
    message.tool_calls = plan.toolCalls.map((call, index) => ({
      id: toolCallId(ctx, index),
      type: 'function',
      function: { name: call.name, arguments: call.argumentsText },
    }));
  }
  return {
    id: completionId(ctx),
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: plan.finish }],
    usage: usage(plan),
    system_fingerprint: null,
  };
}

/**
 * The SSE frames of a streamed completion: a role chunk, content deltas, tool-call deltas (the
 * first with id, type and name, then argument pieces), a finish chunk, the usage chunk when
 * `stream_options.include_usage` is set (with empty `choices`, as OpenAI sends it), then `[DONE]`.
 */
export function openaiStreamFrames(
  plan: CompletionPlan,
  ctx: ResponseContext,
  includeUsage: boolean,
): string[] {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    sseFrame({
      id: completionId(ctx),
      object: 'chat.completion.chunk',
      created: ctx.created,
      model: ctx.model,
      system_fingerprint: null,
      choices,
      ...extra,
    });
  const delta = (d: Record<string, unknown>, finish: string | null = null) =>
    chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);

  const frames = [
    delta({ role: 'assistant', content: plan.toolCalls.length > 0 ? null : '', refusal: null }),
  ];
  for (const piece of splitForStream(plan.text)) frames.push(delta({ content: piece }));
  plan.toolCalls.forEach((call, index) => {
    frames.push(
      delta({
        tool_calls: [
          {
            index,
            id: toolCallId(ctx, index),
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      }),
    );
    for (const piece of splitForStream(call.argumentsText)) {
      frames.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  frames.push(delta({}, plan.finish));
  if (includeUsage) frames.push(chunk([], { usage: usage(plan) }));
  frames.push(sseFrame('[DONE]'));
  return frames;
}

export function wantsUsage(request: MockRequest): boolean {
  return asRecord(request.body.stream_options)?.include_usage === true;
}
