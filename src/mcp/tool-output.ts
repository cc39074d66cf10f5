import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isBatonError } from '../core/errors.js';
import { redactSecrets, redactValue } from '../core/redact.js';

/**
 * What a tool answers: its value as structured content and as JSON text (hosts read either), with
 * the process's secrets masked (the reads already masked each run's own) and its size bounded, so
 * one call can neither leak a secret nor flood a model's context.
 */

/** A string longer than this is cut, saying how much was left out (a log, a result, a reason). */
export const MAX_STRING_CHARS = 32_768;
/** An answer longer than this (as JSON) is refused with how to narrow it. */
export const MAX_ANSWER_CHARS = 100_000;

function cutStrings(value: unknown): unknown {
  if (typeof value === 'string') {
    if (value.length <= MAX_STRING_CHARS) return value;
    return `${value.slice(0, MAX_STRING_CHARS)}… [${value.length - MAX_STRING_CHARS} more characters]`;
  }
  if (Array.isArray(value)) return value.map(cutStrings);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cutStrings(item)]));
  return value;
}

/** A value as every answer gives it: masked, each string bounded. */
export function boundedValue<T>(value: T, secrets: readonly string[]): T {
  return cutStrings(redactValue(value, secrets)) as T;
}

/** A tool's answer: masked, each string bounded, the whole refused past MAX_ANSWER_CHARS. */
export function toolAnswer(value: Record<string, unknown>, secrets: readonly string[]): CallToolResult {
  const bounded = boundedValue(value, secrets);
  const text = JSON.stringify(bounded);
  if (text.length > MAX_ANSWER_CHARS)
    return toolRefusal(
      'OUTPUT_TOO_LARGE',
      `the answer is ${text.length} characters, more than the ${MAX_ANSWER_CHARS} a tool returns: ask for less (a smaller limit, one step, fewer bytes)`,
      secrets,
    );
  return { content: [{ type: 'text', text }], structuredContent: bounded };
}

/** A refusal the model can act on: the error's code and message, masked; nothing was changed. */
export function toolRefusal(code: string, message: string, secrets: readonly string[]): CallToolResult {
  const text = cutStrings(redactSecrets(`${code}: ${message}`, secrets)) as string;
  return { content: [{ type: 'text', text }], isError: true };
}

/** A thrown error as a refusal: a BatonError's code and message; anything else is an internal error. */
export function toolError(error: unknown, secrets: readonly string[]): CallToolResult {
  if (isBatonError(error)) return toolRefusal(error.code, error.message, secrets);
  return toolRefusal('INTERNAL', error instanceof Error ? error.message : String(error), secrets);
}
