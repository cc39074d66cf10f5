/** Helpers the wire parsers share to read text out of a conversation. */

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

const TEXT_BLOCK_TYPES: ReadonlySet<unknown> = new Set([undefined, 'text', 'input_text', 'output_text']);

/**
 * The text parts of a message's content: a string, or the `text` of each block of type `text`,
 * `input_text` or `output_text` (Gemini parts have no type). Tool results and images are skipped.
 */
function textParts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => {
    if (typeof part === 'string') return [part];
    const block = asRecord(part);
    return block &&
      typeof block.text === 'string' &&
      TEXT_BLOCK_TYPES.has(block.type) &&
      block.thought !== true
      ? [block.text]
      : [];
  });
}

/**
 * From the contents of the user messages, in order: all their text joined with newlines, and the
 * last non-empty text part of the last one that has text.
 */
export function summarizeUserText(userContents: readonly unknown[]): {
  userText: string;
  lastUserText: string;
} {
  const perMessage = userContents.map((content) => textParts(content).filter((text) => text !== ''));
  const last = perMessage.filter((parts) => parts.length > 0).at(-1);
  return { userText: perMessage.flat().join('\n'), lastUserText: last?.at(-1) ?? '' };
}
