import { estimateRequestTokens, estimateTokens } from './token-estimate.js';
import type { ChatMessage } from './types.js';

/**
 * Shrinks a history that no longer fits the context window. The harness calls it at most once per
 * call (one compaction in the recovery budget); what it returns REPLACES the caller's history, so
 * the next turn does not overflow again.
 */
export type CompactionHook = (input: CompactionInput) => Promise<ChatMessage[]> | ChatMessage[];

interface CompactionInput {
  messages: readonly ChatMessage[];
  /** The estimated token count the result must stay under. */
  targetTokens: number;
  signal?: AbortSignal;
}

interface DefaultCompactionOptions {
  /**
   * Writes the summary of the removed messages (an LLM summariser, say). Without it the summary slot
   * says how many messages were removed.
   */
  summarise?: (removed: readonly ChatMessage[], signal?: AbortSignal) => Promise<string> | string;
}

const SUMMARY_PREFIX = '[Summary of earlier conversation]';

/**
 * Keeps every system message, one summary slot, and the most recent messages that fit the target.
 * A tool result is never kept without the assistant message that called it. When even the newest
 * message does not fit, its middle is cut (head and tail kept).
 */
export function defaultCompaction(options: DefaultCompactionOptions = {}): CompactionHook {
  return async ({ messages, targetTokens, signal }) => {
    const system = messages.filter((m) => m.role === 'system');
    const rest = messages.filter((m) => m.role !== 'system');
    const summaryReserve = 200;
    let budget = targetTokens - tokensOf(system) - summaryReserve;
    const kept: ChatMessage[] = [];
    for (let i = rest.length - 1; i >= 0; i--) {
      const message = rest[i]!;
      const cost = tokensOf([message]);
      if (cost > budget) break;
      kept.unshift(message);
      budget -= cost;
    }
    // A tool result whose call was cut off cannot stand alone.
    while (kept[0]?.role === 'tool') kept.shift();
    const newest = rest[rest.length - 1];
    if (kept.length === 0 && newest !== undefined) kept.push(cutToFit(newest, Math.max(budget, 64)));
    const removed = rest.slice(0, rest.length - kept.length);
    if (removed.length === 0) return [...system, ...kept];
    const summary = options.summarise
      ? await options.summarise(removed, signal)
      : `${removed.length} earlier message(s) were removed to fit the context window.`;
    return [...system, { role: 'user', content: `${SUMMARY_PREFIX} ${summary}` }, ...kept];
  };
}

function tokensOf(messages: readonly ChatMessage[]): number {
  return estimateRequestTokens({ messages: [...messages] }).total;
}

function cutToFit(message: ChatMessage, tokens: number): ChatMessage {
  const chars = Math.max(0, tokens * 4 - 64);
  if (estimateTokens(message.content) <= tokens) return message;
  const head = message.content.slice(0, Math.floor(chars / 2));
  const tail = message.content.slice(message.content.length - Math.floor(chars / 2));
  return { ...message, content: `${head}\n[… cut to fit the context window …]\n${tail}` };
}
