import { ModelCallError } from '../types.js';

/**
 * Turns whatever an official SDK threw (an APIError with status, headers and body; a connection
 * or timeout error; an abort) into one {@link ModelCallError}. Both the openai and the Anthropic
 * SDK share the APIError shape, so one translation serves both.
 */
export function toModelCallError(error: unknown, options: { midStream?: boolean } = {}): ModelCallError {
  if (error instanceof ModelCallError) return error;
  const record = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  const status = typeof record.status === 'number' ? record.status : undefined;
  const body = errorBody(record.error);
  const name = typeof record.name === 'string' ? record.name : '';
  const message = body.message ?? (error instanceof Error ? error.message : String(error));
  return new ModelCallError(message, {
    status,
    code: body.code ?? stringField(record, 'code'),
    type: body.type ?? stringField(record, 'type'),
    headers: headersOf(record.headers),
    networkCode: networkCodeOf(error),
    timedOut: /Timeout/i.test(name) || /timed? ?out/i.test(message),
    midStream: options.midStream ?? false,
    cause: error,
  });
}

/**
 * A stream that ended cleanly before its finish event: the answer is cut, never complete. It is
 * a failure in the middle of a stream like a reset one (transient, `stream_interrupted`).
 */
export function streamCut(missing: string): ModelCallError {
  return new ModelCallError(`the stream ended before its finish event (${missing}): the answer is cut`, {
    midStream: true,
  });
}

/** Lower-case header names; accepts a fetch `Headers` or a plain object. */
export function headersOf(headers: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers || typeof headers !== 'object') return out;
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') {
    (headers as Headers).forEach((value, key) => {
      out[key.toLowerCase()] = value;
    });
    return out;
  }
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (typeof value === 'string') out[key.toLowerCase()] = value;
  }
  return out;
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** OpenAI bodies are `{ message, type, code }`; Anthropic's are `{ type: 'error', error: { type, message } }`. */
function errorBody(value: unknown): { message?: string; code?: string; type?: string } {
  if (!value || typeof value !== 'object') return {};
  const record = value as Record<string, unknown>;
  const inner =
    record.error && typeof record.error === 'object' ? (record.error as Record<string, unknown>) : record;
  const out: { message?: string; code?: string; type?: string } = {};
  const message = stringField(inner, 'message');
  const code = stringField(inner, 'code') ?? stringField(record, 'code');
  const type = stringField(inner, 'type');
  if (message !== undefined) out.message = message;
  if (code !== undefined) out.code = code;
  if (type !== undefined && type !== 'error') out.type = type;
  return out;
}

/** The first Node network code (`ECONNRESET`, `UND_ERR_SOCKET`, ...) found along the cause chain. */
function networkCodeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^(E[A-Z_]+|UND_ERR_[A-Z_]+)$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
