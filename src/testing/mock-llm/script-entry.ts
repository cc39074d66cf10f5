import { BatonError } from '../../core/errors.js';
import { type FaultSpec, validateFaultSpec } from './faults.js';
import { type MockReply, WIRES, type Wire } from './types.js';

/**
 * Which requests a script entry answers. Every field that is set must match; an empty or missing
 * `when` matches every request. Use it so that a CLI's side requests do not use up the entries
 * meant for its agent turns (see the notes per CLI in the mock-llm command's help).
 */
export interface ScriptWhen {
  /** The wire the request came in on. */
  wire?: Wire;
  /** A substring of the request's model (for Gemini, the model in the path). */
  model?: string;
  /** Whether the request asks for a streamed answer. */
  stream?: boolean;
  /** A substring of the request's user text (all user messages; see MockRequest.userText). */
  promptIncludes?: string;
  /** Whether a tool result has come back in the conversation. */
  hasToolResult?: boolean;
  /**
   * Whether the request declares any tool. Agent turns do; the side requests of claude (title,
   * quota and prefix checks), gemini (model router, next-speaker check) and codex do not.
   */
  hasTools?: boolean;
}

export const WHEN_FIELDS = [
  'wire',
  'model',
  'stream',
  'promptIncludes',
  'hasToolResult',
  'hasTools',
] as const;

/**
 * One script entry: a fault, plus
 * - `reply`: what an answer built by this entry contains (text, or tool calls with the client's own
 *   tool names); without it the server's `reply` option or the default reply is used;
 * - `when`: which requests it answers (default: all);
 * - `repeat`: how many requests it answers (default 1), or 'forever' for a persistent fault.
 */
export type ScriptEntry = FaultSpec & {
  reply?: MockReply;
  when?: ScriptWhen;
  repeat?: number | 'forever';
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validateUsage(usage: unknown, where: string): void {
  if (usage === undefined) return;
  if (!isRecord(usage))
    throw new BatonError('INVALID_ARGUMENT', `${where}: expected an object, got ${JSON.stringify(usage)}`);
  for (const [key, value] of Object.entries(usage)) {
    if (key !== 'cachedTokens' && key !== 'reasoningTokens') {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${where}.${key}: unknown field (known: cachedTokens, reasoningTokens)`,
      );
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${where}.${key}: expected a whole number >= 0, got ${JSON.stringify(value)}`,
      );
    }
  }
}

function validateReply(reply: unknown, where: string): asserts reply is MockReply {
  if (!isRecord(reply)) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: expected { text } or { toolCalls: [...] }, got ${JSON.stringify(reply)}`,
    );
  }
  validateUsage(reply.usage, `${where}.usage`);
  if ('text' in reply) {
    if (typeof reply.text !== 'string') {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${where}.text: expected a string, got ${JSON.stringify(reply.text)}`,
      );
    }
    return;
  }
  if (!Array.isArray(reply.toolCalls)) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: expected { text } or { toolCalls: [...] }, got ${JSON.stringify(reply)}`,
    );
  }
  reply.toolCalls.forEach((call: unknown, i: number) => {
    const at = `${where}.toolCalls[${i}]`;
    if (!isRecord(call) || typeof call.name !== 'string' || call.name === '') {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${at}.name: expected the tool's name as the client declares it, e.g. "Write"`,
      );
    }
    if (call.namespace !== undefined && (typeof call.namespace !== 'string' || call.namespace === '')) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${at}.namespace: expected the Responses wire's tool namespace, e.g. "mcp__baton", got ${JSON.stringify(call.namespace)}`,
      );
    }
    if (!isRecord(call.arguments)) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${at}.arguments: expected an object, e.g. {}, got ${JSON.stringify(call.arguments)}`,
      );
    }
  });
}

function validateWhen(when: unknown, where: string): void {
  if (when === undefined) return;
  if (!isRecord(when))
    throw new BatonError('INVALID_ARGUMENT', `${where}: expected an object, got ${JSON.stringify(when)}`);
  for (const [key, value] of Object.entries(when)) {
    const at = `${where}.${key}`;
    switch (key) {
      case 'wire':
        if (!(WIRES as readonly unknown[]).includes(value)) {
          throw new BatonError(
            'INVALID_ARGUMENT',
            `${at}: unknown wire ${JSON.stringify(value)} (known: ${WIRES.join(', ')})`,
          );
        }
        break;
      case 'model':
      case 'promptIncludes':
        if (typeof value !== 'string')
          throw new BatonError('INVALID_ARGUMENT', `${at}: expected a string, got ${JSON.stringify(value)}`);
        break;
      case 'stream':
      case 'hasToolResult':
      case 'hasTools':
        if (typeof value !== 'boolean') {
          throw new BatonError(
            'INVALID_ARGUMENT',
            `${at}: expected true or false, got ${JSON.stringify(value)}`,
          );
        }
        break;
      default:
        throw new BatonError('INVALID_ARGUMENT', `${at}: unknown field (known: ${WHEN_FIELDS.join(', ')})`);
    }
  }
}

/** Throws on an entry that is not a ScriptEntry; `where` names it in the message (e.g. `script[2]`). */
export function validateScriptEntry(entry: unknown, where: string): asserts entry is ScriptEntry {
  validateFaultSpec(entry, where);
  const record = entry as Record<string, unknown>;
  if (record.reply !== undefined) validateReply(record.reply, `${where}.reply`);
  validateWhen(record.when, `${where}.when`);
  const repeat = record.repeat;
  if (
    repeat !== undefined &&
    repeat !== 'forever' &&
    !(Number.isInteger(repeat) && (repeat as number) >= 1)
  ) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}.repeat: expected a whole number >= 1 or "forever", got ${JSON.stringify(repeat)}`,
    );
  }
}
