import { type CompletionPlan, type PlannedToolCall, splitForStream } from './completion-plan.js';
import { sseFrame } from './http-io.js';
import { asRecord, summarizeUserText } from './request-text.js';
import { DEFAULT_MAX_TOKENS, type MockRequest, type ResponseContext } from './types.js';

/**
 * OpenAI Responses (`POST /v1/responses`): request parsing and response rendering.
 *
 * The answer holds an assistant `message` item (`output_text`) and/or one `function_call` item per
 * call (`call_id`, `name`, `arguments` as a JSON text, possibly cut). A finish at the token limit
 * gives status `incomplete` (`incomplete_details.reason: max_output_tokens`) and, streaming, a
 * `response.incomplete` event in place of `response.completed`.
 */

function outputSchemaOf(body: Record<string, unknown>): unknown {
  const format = asRecord(asRecord(body.text)?.format);
  if (format?.type === 'json_object') return {};
  if (format?.type === 'json_schema') return format.schema ?? {};
  return undefined;
}

export function parseResponsesRequest(body: Record<string, unknown>, path = '/v1/responses'): MockRequest {
  const input = body.input;
  const items: unknown[] =
    typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? input : [];
  const declared = Array.isArray(body.tools) ? body.tools.map((t) => asRecord(t) ?? {}) : [];
  const tools = declared.flatMap((tool) =>
    tool.type === 'function' && typeof tool.name === 'string'
      ? [{ name: tool.name, parameters: tool.parameters ?? {} }]
      : [],
  );
  // A namespace groups several tools (codex's sub-agent tools): each member counts.
  const toolCount = declared.reduce(
    (sum, tool) => sum + (tool.type === 'namespace' && Array.isArray(tool.tools) ? tool.tools.length : 1),
    0,
  );
  const records = items.map((item) => asRecord(item));
  const userContents = records.flatMap((item) =>
    item?.role === 'user' && (item.type === undefined || item.type === 'message') ? [item.content] : [],
  );
  const max = body.max_output_tokens;
  return {
    wire: 'responses',
    model: typeof body.model === 'string' ? body.model : '',
    path,
    messages: items,
    tools,
    toolCount,
    maxTokens: typeof max === 'number' && max > 0 ? max : DEFAULT_MAX_TOKENS,
    stream: body.stream === true,
    ...summarizeUserText(userContents),
    hasToolResult: records.some(
      (item) => typeof item?.type === 'string' && item.type.endsWith('_call_output'),
    ),
    outputSchema: outputSchemaOf(body),
    body,
  };
}

const pad = (ctx: ResponseContext) => String(ctx.seq).padStart(6, '0');

function usage(plan: CompletionPlan) {
  const output = plan.outputTokens + plan.reasoningTokens;
  return {
    input_tokens: plan.inputTokens,
    input_tokens_details: { cached_tokens: plan.cachedTokens },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: plan.reasoningTokens },
    total_tokens: plan.inputTokens + output,
  };
}

function textPart(text: string) {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

function messageItem(ctx: ResponseContext, status: string, content: unknown[]) {
  return { id: `msg_mock${pad(ctx)}`, type: 'message', status, role: 'assistant', content };
}

function callItem(call: PlannedToolCall, ctx: ResponseContext, index: number, status: string, args: string) {
  return {
    id: `fc_mock${pad(ctx)}_${index}`,
    type: 'function_call',
    status,
    call_id: `call_mock${pad(ctx)}_${index}`,
    ...(call.namespace ? { namespace: call.namespace } : {}),
    name: call.name,
    arguments: args,
  };
}

function hasMessage(plan: CompletionPlan): boolean {
  return plan.text !== '' || plan.toolCalls.length === 0;
}

/** The finished output items, in order: the message (if any), then the calls. */
function outputItems(plan: CompletionPlan, ctx: ResponseContext): unknown[] {
  const items: unknown[] = [];
  if (hasMessage(plan)) items.push(messageItem(ctx, 'completed', [textPart(plan.text)]));
  plan.toolCalls.forEach((call, index) => {
    items.push(callItem(call, ctx, index, call.cut ? 'incomplete' : 'completed', call.argumentsText));
  });
  return items;
}

type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

function responseObject(
  ctx: ResponseContext,
  request: MockRequest,
  status: ResponseStatus,
  extra: { output?: unknown[]; usage?: unknown; error?: unknown } = {},
) {
  return {
    id: `resp_mock${pad(ctx)}`,
    object: 'response',
    created_at: ctx.created,
    status,
    background: false,
    error: extra.error ?? null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: null,
    max_output_tokens:
      typeof request.body.max_output_tokens === 'number' ? request.body.max_output_tokens : null,
    model: ctx.model,
    output: extra.output ?? [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    truncation: 'disabled',
    usage: extra.usage ?? null,
    metadata: {},
  };
}

function finalStatus(plan: CompletionPlan): ResponseStatus {
  return plan.finish === 'length' ? 'incomplete' : 'completed';
}

export function renderResponsesBody(
  plan: CompletionPlan,
  ctx: ResponseContext,
  request: MockRequest,
): unknown {
  return responseObject(ctx, request, finalStatus(plan), {
    output: outputItems(plan, ctx),
    usage: usage(plan),
  });
}

/**
 * The SSE frames of a streamed response: response.created, response.in_progress; for the message
 * output_item.added, content_part.added, output_text.delta…, output_text.done, content_part.done,
 * output_item.done; for each call output_item.added, function_call_arguments.delta…,
 * function_call_arguments.done, output_item.done; then response.completed (or response.incomplete)
 * carrying the whole response with its usage. Each event has `type` and `sequence_number`.
 */
export function responsesStreamFrames(
  plan: CompletionPlan,
  ctx: ResponseContext,
  request: MockRequest,
): string[] {
  let sequence = 0;
  const frames: string[] = [];
  const event = (type: string, data: Record<string, unknown>) => {
    frames.push(sseFrame({ type, sequence_number: sequence, ...data }, type));
    sequence += 1;
  };
  event('response.created', { response: responseObject(ctx, request, 'in_progress') });
  event('response.in_progress', { response: responseObject(ctx, request, 'in_progress') });
  let outputIndex = 0;
  if (hasMessage(plan)) {
    const item_id = `msg_mock${pad(ctx)}`;
    const at = { item_id, output_index: outputIndex, content_index: 0 };
    event('response.output_item.added', {
      output_index: outputIndex,
      item: messageItem(ctx, 'in_progress', []),
    });
    event('response.content_part.added', { ...at, part: textPart('') });
    for (const delta of splitForStream(plan.text))
      event('response.output_text.delta', { ...at, delta, logprobs: [] });
    event('response.output_text.done', { ...at, text: plan.text, logprobs: [] });
    event('response.content_part.done', { ...at, part: textPart(plan.text) });
    event('response.output_item.done', {
      output_index: outputIndex,
      item: messageItem(ctx, 'completed', [textPart(plan.text)]),
    });
    outputIndex += 1;
  }
  plan.toolCalls.forEach((call, index) => {
    const item_id = `fc_mock${pad(ctx)}_${index}`;
    const at = { item_id, output_index: outputIndex };
    event('response.output_item.added', {
      output_index: outputIndex,
      item: callItem(call, ctx, index, 'in_progress', ''),
    });
    for (const delta of splitForStream(call.argumentsText)) {
      event('response.function_call_arguments.delta', { ...at, delta });
    }
    event('response.function_call_arguments.done', { ...at, name: call.name, arguments: call.argumentsText });
    const status = call.cut ? 'incomplete' : 'completed';
    event('response.output_item.done', {
      output_index: outputIndex,
      item: callItem(call, ctx, index, status, call.argumentsText),
    });
    outputIndex += 1;
  });
  const status = finalStatus(plan);
  event(status === 'incomplete' ? 'response.incomplete' : 'response.completed', {
    response: responseObject(ctx, request, status, { output: outputItems(plan, ctx), usage: usage(plan) }),
  });
  return frames;
}

/** The `response.failed` event a stream ends with when the server fails mid-answer. */
export function responsesFailedFrame(ctx: ResponseContext, request: MockRequest, sequence: number): string {
  const error = {
    code: 'server_error',
    message: 'The server had an error while processing your request. Sorry about that!',
  };
  const response = responseObject(ctx, request, 'failed', { error });
  return sseFrame({ type: 'response.failed', sequence_number: sequence, response }, 'response.failed');
}
