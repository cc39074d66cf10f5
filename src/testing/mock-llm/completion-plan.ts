import { invalidArguments, minimalArguments } from './default-reply.js';
import type { MockReply, MockRequest } from './types.js';

/** The faults that still answer 200 with a completion. */
export type CompletionFault =
  | 'ok'
  | 'truncate_text'
  | 'stop_at_limit'
  | 'truncate_tool'
  | 'finished_cut_json'
  | 'unknown_tool'
  | 'invalid_args';

export interface PlannedToolCall {
  name: string;
  /** The Responses wire's namespace of the tool (see MockToolCall). */
  namespace?: string;
  /** The arguments text exactly as it is sent (possibly cut, so not always JSON). */
  argumentsText: string;
  /** Whether `argumentsText` was cut in the middle. */
  cut: boolean;
}

/** A completion independent of the wire format; the wire modules render it. */
export interface CompletionPlan {
  text: string;
  toolCalls: PlannedToolCall[];
  /** OpenAI names; Anthropic maps stop → end_turn, length → max_tokens, tool_calls → tool_use. */
  finish: 'stop' | 'length' | 'tool_calls';
  /** Includes `cachedTokens`. */
  inputTokens: number;
  /** Visible output; reasoning tokens are counted apart. */
  outputTokens: number;
  /** Input tokens served from cache (from the reply's `usage`, else 0). */
  cachedTokens: number;
  /** Reasoning / thinking tokens (from the reply's `usage`, else 0). */
  reasoningTokens: number;
}

const UNKNOWN_TOOL_NAME = 'no_such_tool';

/** ≈ 4 characters per token, never below 1 for non-empty text. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** The first half of a JSON text (at least one character, never the whole). */
function cutInMiddle(text: string): string {
  return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
}

function replyText(reply: MockReply, request: MockRequest, fallback: () => MockReply): string {
  if ('text' in reply) return reply.text;
  const other = fallback();
  return 'text' in other ? other.text : `ok: ${request.model}`;
}

/** The call the tool faults start from: the reply's first call, else the first declared tool. */
function baseCall(
  reply: MockReply,
  request: MockRequest,
): { name: string; arguments: Record<string, unknown> } {
  if ('toolCalls' in reply && reply.toolCalls[0]) return reply.toolCalls[0];
  const tool = request.tools[0];
  return tool
    ? { name: tool.name, arguments: minimalArguments(tool.parameters) }
    : { name: UNKNOWN_TOOL_NAME, arguments: {} };
}

function call(name: string, args: Record<string, unknown>, cut = false, namespace?: string): PlannedToolCall {
  const text = JSON.stringify(args);
  return { name, ...(namespace ? { namespace } : {}), argumentsText: cut ? cutInMiddle(text) : text, cut };
}

/**
 * Builds the completion for `fault`. `reply` is the configured (or default) reply; `textFallback`
 * gives a text reply when a text fault meets a tool-call reply.
 */
export function planCompletion(
  fault: CompletionFault,
  request: MockRequest,
  reply: MockReply,
  textFallback: () => MockReply,
): CompletionPlan {
  const cachedTokens = reply.usage?.cachedTokens ?? 0;
  const reasoningTokens = reply.usage?.reasoningTokens ?? 0;
  const counts = planCounts(fault, request, reply, textFallback);
  return { ...counts, inputTokens: counts.inputTokens + cachedTokens, cachedTokens, reasoningTokens };
}

function planCounts(
  fault: CompletionFault,
  request: MockRequest,
  reply: MockReply,
  textFallback: () => MockReply,
): Omit<CompletionPlan, 'cachedTokens' | 'reasoningTokens'> {
  const inputTokens = estimateTokens(JSON.stringify(request.messages).length);
  const produced = (text: string, calls: PlannedToolCall[]) =>
    estimateTokens(text.length + calls.reduce((sum, c) => sum + c.name.length + c.argumentsText.length, 0));
  const limit = request.maxTokens;

  switch (fault) {
    case 'truncate_text': {
      const full = replyText(reply, request, textFallback);
      return { text: cutInMiddle(full), toolCalls: [], finish: 'length', inputTokens, outputTokens: limit };
    }
    case 'stop_at_limit': {
      const text = replyText(reply, request, textFallback);
      return { text, toolCalls: [], finish: 'stop', inputTokens, outputTokens: limit };
    }
    case 'truncate_tool': {
      const base = baseCall(reply, request);
      return {
        text: '',
        toolCalls: [call(base.name, base.arguments, true)],
        finish: 'length',
        inputTokens,
        outputTokens: limit,
      };
    }
    case 'finished_cut_json': {
      const base = baseCall(reply, request);
      const calls = [call(base.name, base.arguments, true)];
      return {
        text: '',
        toolCalls: calls,
        finish: 'tool_calls',
        inputTokens,
        outputTokens: produced('', calls),
      };
    }
    case 'unknown_tool': {
      const calls = [call(UNKNOWN_TOOL_NAME, { input: 'x' })];
      return {
        text: '',
        toolCalls: calls,
        finish: 'tool_calls',
        inputTokens,
        outputTokens: produced('', calls),
      };
    }
    case 'invalid_args': {
      const tool = request.tools[0];
      const calls = [tool ? call(tool.name, invalidArguments(tool.parameters)) : call(UNKNOWN_TOOL_NAME, {})];
      return {
        text: '',
        toolCalls: calls,
        finish: 'tool_calls',
        inputTokens,
        outputTokens: produced('', calls),
      };
    }
    case 'ok': {
      if ('toolCalls' in reply && reply.toolCalls.length > 0) {
        const calls = reply.toolCalls.map((c) => call(c.name, c.arguments, false, c.namespace));
        return {
          text: '',
          toolCalls: calls,
          finish: 'tool_calls',
          inputTokens,
          outputTokens: produced('', calls),
        };
      }
      const text = 'text' in reply ? reply.text : '';
      return { text, toolCalls: [], finish: 'stop', inputTokens, outputTokens: produced(text, []) };
    }
  }
}

/** Splits `text` into about `parts` pieces for streaming (an empty text gives no pieces). */
export function splitForStream(text: string, parts = 3): string[] {
  if (text === '') return [];
  const size = Math.max(1, Math.ceil(text.length / parts));
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}
