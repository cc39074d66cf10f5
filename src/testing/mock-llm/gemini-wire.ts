import { type CompletionPlan, splitForStream } from './completion-plan.js';
import { sseFrame } from './http-io.js';
import { asRecord, summarizeUserText } from './request-text.js';
import { DEFAULT_MAX_TOKENS, type MockRequest, type ResponseContext } from './types.js';

/**
 * Gemini API (`POST /v1beta/models/<model>:generateContent` and
 * `:streamGenerateContent?alt=sse`): request parsing and response rendering. The model is in the
 * path. A `functionCall` part carries `args` as an object, so a cut arguments text cannot be shown:
 * a call cut at the token limit (truncate_tool) is sent with `args: {}` and finishReason
 * MAX_TOKENS, and a cut call that claims to be finished (finished_cut_json) becomes what Gemini
 * sends for it, a candidate without parts and finishReason MALFORMED_FUNCTION_CALL.
 */

function outputSchemaOf(body: Record<string, unknown>): unknown {
  const config = asRecord(body.generationConfig) ?? {};
  if (config.responseMimeType !== 'application/json') return undefined;
  return config.responseJsonSchema ?? config.responseSchema ?? {};
}

function partsOf(content: unknown): unknown[] {
  const parts = asRecord(content)?.parts;
  return Array.isArray(parts) ? parts : [];
}

export function parseGeminiRequest(
  body: Record<string, unknown>,
  route: { model: string; stream: boolean; path: string },
): MockRequest {
  const contents = Array.isArray(body.contents) ? body.contents : [];
  const declared = Array.isArray(body.tools) ? body.tools.map((t) => asRecord(t) ?? {}) : [];
  const tools: MockRequest['tools'] = [];
  let toolCount = 0;
  for (const tool of declared) {
    for (const [key, value] of Object.entries(tool)) {
      if (key !== 'functionDeclarations' || !Array.isArray(value)) {
        toolCount += 1; // googleSearch, codeExecution, urlContext, …
        continue;
      }
      for (const raw of value) {
        const fn = asRecord(raw);
        if (typeof fn?.name !== 'string') continue;
        tools.push({ name: fn.name, parameters: fn.parametersJsonSchema ?? fn.parameters ?? {} });
        toolCount += 1;
      }
    }
  }
  const userContents = contents.filter((c) => {
    const role = asRecord(c)?.role;
    return role === undefined || role === 'user';
  });
  const max = asRecord(body.generationConfig)?.maxOutputTokens;
  return {
    wire: 'gemini',
    model: route.model,
    path: route.path,
    messages: contents,
    tools,
    toolCount,
    maxTokens: typeof max === 'number' && max > 0 ? max : DEFAULT_MAX_TOKENS,
    stream: route.stream,
    ...summarizeUserText(userContents.map(partsOf)),
    hasToolResult: contents.some((c) => partsOf(c).some((p) => asRecord(p)?.functionResponse !== undefined)),
    outputSchema: outputSchemaOf(body),
    body,
  };
}

function argsObject(argumentsText: string): Record<string, unknown> {
  try {
    return asRecord(JSON.parse(argumentsText)) ?? {};
  } catch {
    return {};
  }
}

/** Whether the plan is a cut call that claims to be complete (Gemini: MALFORMED_FUNCTION_CALL). */
function isMalformed(plan: CompletionPlan): boolean {
  return plan.finish === 'tool_calls' && plan.toolCalls.some((call) => call.cut);
}

function finishReason(plan: CompletionPlan): string {
  if (isMalformed(plan)) return 'MALFORMED_FUNCTION_CALL';
  return plan.finish === 'length' ? 'MAX_TOKENS' : 'STOP';
}

/** Token counts; the cached and thoughts counts are only present when not zero, as Gemini does. */
function usageMetadata(plan: CompletionPlan) {
  return {
    promptTokenCount: plan.inputTokens,
    candidatesTokenCount: plan.outputTokens,
    totalTokenCount: plan.inputTokens + plan.outputTokens + plan.reasoningTokens,
    ...(plan.cachedTokens > 0 ? { cachedContentTokenCount: plan.cachedTokens } : {}),
    ...(plan.reasoningTokens > 0 ? { thoughtsTokenCount: plan.reasoningTokens } : {}),
  };
}

function callParts(plan: CompletionPlan): unknown[] {
  return plan.toolCalls.map((call) => ({
    functionCall: { name: call.name, args: call.cut ? {} : argsObject(call.argumentsText) },
  }));
}

function chunk(ctx: ResponseContext, parts: unknown[] | undefined, extra: Record<string, unknown> = {}) {
  const candidate: Record<string, unknown> = {
    content: parts ? { role: 'model', parts } : {},
    index: 0,
  };
  const { finishReason: reason, finishMessage, ...rest } = extra;
  if (reason !== undefined) candidate.finishReason = reason;
  if (finishMessage !== undefined) candidate.finishMessage = finishMessage;
  return {
    candidates: [candidate],
    ...rest,
    modelVersion: ctx.model,
    responseId: `mock${String(ctx.seq).padStart(6, '0')}`,
  };
}

function malformedChunk(plan: CompletionPlan, ctx: ResponseContext) {
  const text = plan.toolCalls.map((call) => `${call.name}(${call.argumentsText}`).join(' ');
  return chunk(ctx, undefined, {
    finishReason: 'MALFORMED_FUNCTION_CALL',
    finishMessage: `Malformed function call: ${text}`,
    usageMetadata: usageMetadata(plan),
  });
}

export function renderGeminiBody(plan: CompletionPlan, ctx: ResponseContext): unknown {
  if (isMalformed(plan)) return malformedChunk(plan, ctx);
  const parts: unknown[] = [];
  if (plan.text !== '' || plan.toolCalls.length === 0) parts.push({ text: plan.text });
  parts.push(...callParts(plan));
  return chunk(ctx, parts, { finishReason: finishReason(plan), usageMetadata: usageMetadata(plan) });
}

/**
 * The SSE frames of a streamed answer: one chunk per text piece, then one chunk with every
 * function call; the last chunk also carries finishReason and usageMetadata.
 */
export function geminiStreamFrames(plan: CompletionPlan, ctx: ResponseContext): string[] {
  if (isMalformed(plan)) return [sseFrame(malformedChunk(plan, ctx))];
  const pieces: unknown[][] = splitForStream(plan.text).map((text) => [{ text }]);
  if (plan.toolCalls.length > 0) pieces.push(callParts(plan));
  if (pieces.length === 0) pieces.push([{ text: '' }]);
  return pieces.map((parts, i) =>
    sseFrame(
      i === pieces.length - 1
        ? chunk(ctx, parts, { finishReason: finishReason(plan), usageMetadata: usageMetadata(plan) })
        : chunk(ctx, parts),
    ),
  );
}
