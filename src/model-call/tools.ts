import { createHash } from 'node:crypto';
import type { ToolSpec } from './types.js';

/**
 * A tool the agent loop may call. `read` tools may be retried after a timeout (bounded); `write`
 * tools run at most once per idempotency key, their result recorded durably inside a Baton step.
 */
export interface ToolDefinition<Args = Record<string, unknown>> {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema); checked with ajv before the tool runs. */
  parameters: Record<string, unknown>;
  kind: 'read' | 'write';
  run(args: Args, context: ToolContext): unknown | Promise<unknown>;
  /** Refuses a call before it runs: return a reason to refuse, or true to allow. */
  permit?(args: Args): true | string;
  /** Write tools: the idempotency key. Default: run + step + tool + hash of the arguments. */
  idempotencyKey?(args: Args): string;
  /** Milliseconds before one execution times out. Default 30,000. */
  timeoutMs?: number;
  /** Read tools: retries after a timeout. Default 1; write tools never retry. */
  retries?: number;
}

interface ToolContext {
  signal: AbortSignal;
  /** The key this execution is recorded under (write tools); the same key never runs twice. */
  idempotencyKey: string;
  toolCallId: string;
}

/** Stable tool error codes, shown to the model as `Error[code]: message`. */
export type ToolErrorCode =
  | 'unknown_tool'
  | 'invalid_arguments'
  | 'permission_denied'
  | 'timeout'
  | 'tool_failed'
  | 'unknown_outcome';

/**
 * Thrown by a tool to name its failure. `applied: false` tells the loop a write did NOT happen,
 * so its idempotency record is cleared and a later call with the same key may run it.
 */
export class ToolError extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
    readonly applied: boolean | undefined = undefined,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

export function toolSpecOf(tool: ToolDefinition<never>): ToolSpec {
  return { name: tool.name, description: tool.description, parameters: tool.parameters };
}

/** JSON with sorted keys, so equal arguments hash the same whatever order the model wrote them in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function argumentsHash(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args)).digest('hex').slice(0, 16);
}

/** A recorded write: its result, or only the intent when the outcome is unknown (a crash mid-write). */
export type EffectRecord = { state: 'intent' } | { state: 'done'; result: unknown };

/**
 * Where write results are recorded. Inside a Baton step this is the store's effect table, so a
 * resumed step finds what was already done; outside one an in-memory map serves.
 */
export interface EffectLedger {
  /** Returns the existing record for `key`, or records an intent and returns null. */
  begin(key: string): Promise<EffectRecord | null>;
  complete(key: string, result: unknown): Promise<void>;
  /** Forgets an intent whose write is known not to have happened. */
  clear(key: string): Promise<void>;
}

export class MemoryEffectLedger implements EffectLedger {
  private readonly records = new Map<string, EffectRecord>();

  async begin(key: string): Promise<EffectRecord | null> {
    const existing = this.records.get(key);
    if (existing) return existing;
    this.records.set(key, { state: 'intent' });
    return null;
  }

  async complete(key: string, result: unknown): Promise<void> {
    this.records.set(key, { state: 'done', result });
  }

  async clear(key: string): Promise<void> {
    this.records.delete(key);
  }
}
