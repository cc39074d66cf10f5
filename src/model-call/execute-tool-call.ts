import type { Ajv, ValidateFunction } from 'ajv';
import { newSchemaChecker } from './json-schema.js';
import {
  argumentsHash,
  type EffectLedger,
  type ToolDefinition,
  ToolError,
  type ToolErrorCode,
} from './tools.js';
import type { ToolCall } from './types.js';

/** What a tool call came to; an error goes back to the model as `Error[code]: message`. */
type ToolCallOutcome =
  | { ok: true; content: string; replayed: boolean; key?: string }
  | { ok: false; code: ToolErrorCode; message: string; argsHash: string; fatal: boolean };

/** At most this many characters of a tool result go back to the model. */
const MAX_TOOL_RESULT_CHARS = 50_000;

/**
 * Checks and runs tool calls: unknown tool, unparsable or schema-invalid arguments and refused
 * permissions become tool errors for the model (never exceptions, never silent retries); read
 * tools may retry a timeout; write tools run at most once per idempotency key.
 */
export class ToolRunner {
  private readonly tools = new Map<string, ToolDefinition>();
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    tools: readonly ToolDefinition<never>[],
    private readonly ledger: EffectLedger,
    private readonly scope: string,
  ) {
    let ajv: Ajv | undefined;
    for (const tool of tools as unknown as ToolDefinition[]) {
      if (this.tools.has(tool.name)) throw new Error(`tool "${tool.name}" is declared twice`);
      this.tools.set(tool.name, tool);
      // Loaded by the first runner that has tools: a process whose model steps have none never loads it.
      ajv ??= newSchemaChecker();
      this.validators.set(tool.name, ajv.compile(tool.parameters));
    }
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  async execute(call: ToolCall, signal: AbortSignal): Promise<ToolCallOutcome> {
    const tool = this.tools.get(call.name);
    let args: unknown;
    try {
      args = call.argumentsText.trim() === '' ? {} : JSON.parse(call.argumentsText);
    } catch {
      args = undefined;
    }
    const argsHash = argumentsHash(args ?? call.argumentsText);
    const error = (code: ToolErrorCode, message: string, fatal = false): ToolCallOutcome => ({
      ok: false,
      code,
      message,
      argsHash,
      fatal,
    });
    if (!tool)
      return error(
        'unknown_tool',
        `no tool named "${call.name}" (available: ${this.names().join(', ') || 'none'})`,
      );
    if (args === undefined || typeof args !== 'object' || args === null || Array.isArray(args)) {
      return error('invalid_arguments', 'the arguments must be one JSON object');
    }
    const validate = this.validators.get(tool.name)!;
    if (!validate(args)) {
      const detail = (validate.errors ?? [])
        .map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`)
        .join('; ');
      return error('invalid_arguments', detail);
    }
    const permitted = tool.permit ? tool.permit(args as Record<string, unknown>) : true;
    if (permitted !== true) return error('permission_denied', permitted);
    const key =
      tool.idempotencyKey?.(args as Record<string, unknown>) ?? `${this.scope}:${tool.name}:${argsHash}`;
    return tool.kind === 'read'
      ? this.runRead(tool, args as Record<string, unknown>, key, call.id, signal, error)
      : this.runWrite(tool, args as Record<string, unknown>, key, call.id, signal, error);
  }

  private async runRead(
    tool: ToolDefinition,
    args: Record<string, unknown>,
    key: string,
    toolCallId: string,
    signal: AbortSignal,
    error: (code: ToolErrorCode, message: string) => ToolCallOutcome,
  ): Promise<ToolCallOutcome> {
    const retries = Math.max(0, tool.retries ?? 1);
    for (let attempt = 0; ; attempt++) {
      try {
        return {
          ok: true,
          content: render(await runWithTimeout(tool, args, key, toolCallId, signal)),
          replayed: false,
        };
      } catch (thrown) {
        const failure = asToolError(thrown);
        if (failure.code === 'timeout' && attempt < retries && !signal.aborted) continue;
        return error(failure.code, failure.message);
      }
    }
  }

  private async runWrite(
    tool: ToolDefinition,
    args: Record<string, unknown>,
    key: string,
    toolCallId: string,
    signal: AbortSignal,
    error: (code: ToolErrorCode, message: string, fatal?: boolean) => ToolCallOutcome,
  ): Promise<ToolCallOutcome> {
    const existing = await this.ledger.begin(key);
    if (existing?.state === 'done')
      return { ok: true, content: render(existing.result), replayed: true, key };
    if (existing?.state === 'intent') {
      return error(
        'unknown_outcome',
        `a write by "${tool.name}" under key ${key} started before but its outcome was never recorded; it is not run again blindly`,
        true,
      );
    }
    try {
      const result = await runWithTimeout(tool, args, key, toolCallId, signal);
      await this.ledger.complete(key, result ?? null);
      return { ok: true, content: render(result), replayed: false, key };
    } catch (thrown) {
      const failure = asToolError(thrown);
      if (failure.applied === false) {
        await this.ledger.clear(key);
        return error(failure.code, failure.message);
      }
      if (failure.code === 'timeout') {
        // The write may or may not have happened: the intent stays, and nothing retries it.
        return error(
          'unknown_outcome',
          `"${tool.name}" timed out; its outcome is unknown (key ${key})`,
          true,
        );
      }
      const message = `Error[${failure.code}]: ${failure.message}`;
      await this.ledger.complete(key, message);
      return error(failure.code, failure.message);
    }
  }
}

async function runWithTimeout(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  idempotencyKey: string,
  toolCallId: string,
  signal: AbortSignal,
): Promise<unknown> {
  const timeoutMs = tool.timeoutMs ?? 30_000;
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(new Error('timeout'));
      reject(new ToolError('timeout', `"${tool.name}" did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([
      Promise.resolve(tool.run(args, { signal: controller.signal, idempotencyKey, toolCallId })),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

function asToolError(thrown: unknown): ToolError {
  if (thrown instanceof ToolError) return thrown;
  return new ToolError('tool_failed', thrown instanceof Error ? thrown.message : String(thrown));
}

function render(result: unknown): string {
  const text = typeof result === 'string' ? result : (JSON.stringify(result) ?? 'null');
  return text.length > MAX_TOOL_RESULT_CHARS ? `${text.slice(0, MAX_TOOL_RESULT_CHARS)}… [cut]` : text;
}
