import type { ChatMessage, ModelRequest, ToolSpec } from './types.js';

/**
 * Token counts without a tokenizer. The heuristic is the one OpenAI documents for English ("one token
 * is about 4 characters"): `ceil(chars / 4)`. It undercounts code, JSON and non-Latin scripts, so
 * callers keep a margin and trust the provider's own count (`usage`, an overflow message) when they
 * have one. Characters are UTF-16 code units (`string.length`).
 */
const CHARS_PER_TOKEN = 4;

/**
 * Tokens each message costs beyond its text: role and separators in the chat template (OpenAI's
 * cookbook counts 3 per message plus the name; Anthropic's template is similar). Also charged per tool
 * call (its id and wrapper) and per offered tool (its wrapper around the JSON schema).
 */
export const MESSAGE_OVERHEAD_TOKENS = 4;

interface RequestTokenEstimate {
  /** `system + messages + tools`. */
  total: number;
  /** System messages, wherever they sit in the list. */
  system: number;
  /** Every other message, tool calls and tool results included. */
  messages: number;
  /** The offered tools: name, description and the JSON schema as serialised. */
  tools: number;
}

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export function estimateRequestTokens(
  request: Pick<ModelRequest, 'messages' | 'tools'>,
): RequestTokenEstimate {
  let system = 0;
  let messages = 0;
  for (const message of request.messages) {
    if (message.role === 'system') system += estimateMessageTokens(message);
    else messages += estimateMessageTokens(message);
  }
  let tools = 0;
  for (const tool of request.tools ?? []) tools += estimateToolTokens(tool);
  return { total: system + messages + tools, system, messages, tools };
}

function estimateMessageTokens(message: ChatMessage): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + estimateTokens(message.content);
  if (message.role === 'assistant') {
    for (const call of message.toolCalls ?? []) {
      tokens += MESSAGE_OVERHEAD_TOKENS + estimateTokens(call.name) + estimateTokens(call.argumentsText);
    }
  }
  if (message.role === 'tool') tokens += estimateTokens(message.name);
  return tokens;
}

function estimateToolTokens(tool: ToolSpec): number {
  const schema = JSON.stringify(tool.parameters);
  return (
    MESSAGE_OVERHEAD_TOKENS +
    estimateTokens(tool.name) +
    estimateTokens(tool.description) +
    estimateTokens(schema)
  );
}
