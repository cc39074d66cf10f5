import type { ModelRequest, ModelResponse, Truncation } from './types.js';

/**
 * Provider finish reasons that mean "cut by the output budget or the window", in case an adapter passed
 * one through as `other`: OpenAI `length`, Anthropic `max_tokens` and `model_context_window_exceeded`,
 * Gemini `MAX_TOKENS`, Responses API `max_output_tokens`.
 */
const LENGTH_FINISH_REASONS: ReadonlySet<string> = new Set([
  'length',
  'max_tokens',
  'max_output_tokens',
  'model_context_window_exceeded',
]);

/** Provider finish reasons of a turn that ended on a tool call: OpenAI `tool_calls`, Anthropic `tool_use`. */
const TOOL_FINISH_REASONS: ReadonlySet<string> = new Set(['tool_calls', 'tool_use', 'function_call']);

/**
 * Says why a response must not be trusted as complete, or `null` when it can be:
 * - `finish_length`: the provider stopped on the output budget or the context window;
 * - `output_at_limit`: the output used the whole budget, whatever the finish reason said;
 * - `tool_arguments_invalid_json`: a tool call's arguments are not a JSON object (an empty string counts
 *   as `{}`, what providers send for a tool without parameters).
 * `toolCall` is set when the cut response carries a tool call (or its finish reason says one was under
 * way): such a call is never executed nor continued, only regenerated.
 */
export function detectTruncation(
  response: ModelResponse,
  request: Pick<ModelRequest, 'maxOutputTokens'>,
): Truncation | null {
  const raw = response.rawFinishReason?.toLowerCase() ?? '';
  const toolCall =
    response.toolCalls.length > 0 || response.finishReason === 'tool_calls' || TOOL_FINISH_REASONS.has(raw);
  if (response.finishReason === 'length' || LENGTH_FINISH_REASONS.has(raw)) {
    return { reason: 'finish_length', toolCall };
  }
  if (request.maxOutputTokens > 0 && response.usage.outputTokens >= request.maxOutputTokens) {
    return { reason: 'output_at_limit', toolCall };
  }
  if (response.toolCalls.some((call) => !isJsonObjectText(call.argumentsText))) {
    return { reason: 'tool_arguments_invalid_json', toolCall: true };
  }
  return null;
}

function isJsonObjectText(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
