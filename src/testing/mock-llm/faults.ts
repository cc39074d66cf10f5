import { BatonError } from '../../core/errors.js';
import { OVERFLOW_FLAVOURS, type OverflowFlavour } from './overflow-bodies.js';

/**
 * The faults the mock model server can inject, one per request. Each is a behaviour seen from a
 * real provider; the comments say what the client receives.
 */
export const FAULT_NAMES = [
  /** A normal answer: the script entry's `reply`, else the `reply` option, else the default reply. */
  'ok',
  /**
   * 429 with a provider-shaped body and optional `retry-after` (seconds, or an HTTP date) /
   * `retry-after-ms` headers; on Gemini the delay is also in the body's `RetryInfo`.
   */
  'rate_limit',
  /** 429 "Request too large ... tokens per min": a request that can never fit the rate window. */
  'rate_window_too_large',
  /** 5xx with a provider-shaped body (529 is Anthropic's "Overloaded"; other wires send it as is). */
  'server_error',
  /** The request is accepted and nothing is sent for `ms`, then the connection is dropped. */
  'stall',
  /** A 200 response is started (or, with `beforeHeaders`, not even that), then the socket is reset. */
  'reset',
  /**
   * Streaming only: a few chunks, then the wire's in-stream error (Chat: a `data:` error, Anthropic:
   * `event: error`, Responses: `response.failed`, Gemini: a bare JSON google.rpc.Status chunk).
   * Non-streaming requests get a 500.
   */
  'midstream_error',
  /**
   * Streaming only: the start of a normal answer, then the stream ends cleanly (no error, no
   * reset) before its finish event. Chat: no `finish_reason` chunk, usage chunk or `[DONE]`;
   * Anthropic: no `message_delta` / `message_stop`; Responses: no `response.completed`; Gemini: no
   * chunk with `finishReason`. A proxy or load balancer that closes a long stream does this.
   * Non-streaming requests get a 500.
   */
  'cut_stream',
  /**
   * Streaming only: the start of a normal answer, then nothing for `ms` (no event, no keep-alive),
   * then the connection is dropped: a stream that went silent. Non-streaming requests get a 500.
   */
  'silent_stream',
  /** The provider's real context-overflow status and body, for the chosen flavour. */
  'overflow',
  /** 200 with partial text; finish `length` / stop `max_tokens`; output tokens = the max tokens. */
  'truncate_text',
  /** 200 finishing normally but with output tokens exactly equal to the max tokens. */
  'stop_at_limit',
  /** A tool call whose arguments JSON is cut in the middle; finish `length` / `max_tokens`. */
  'truncate_tool',
  /** A tool call whose arguments JSON is cut, yet the finish says the call is complete. */
  'finished_cut_json',
  /** A tool call to `no_such_tool`, a name the request did not declare. */
  'unknown_tool',
  /** A tool call to the first declared tool with arguments that break its schema. */
  'invalid_args',
  /** 400/401/403/404: invalid request, bad key, no permission, unknown model. */
  'fatal',
  /** Out of credit: OpenAI 429 `insufficient_quota`, Anthropic 400 "credit balance is too low". */
  'quota',
] as const;

export type FaultName = (typeof FAULT_NAMES)[number];

export type FaultSpec =
  | { fault: 'ok' }
  /**
   * `retryAfterS`: `retry-after: <seconds>`. `retryAfterDate`: `retry-after: <HTTP date>` that many
   * seconds from the answer (rounded up to a whole second). `retryAfterMs`: `retry-after-ms`.
   */
  | { fault: 'rate_limit'; retryAfterS?: number; retryAfterMs?: number; retryAfterDate?: number }
  | { fault: 'rate_window_too_large' }
  | { fault: 'server_error'; status?: (typeof SERVER_ERROR_STATUSES)[number] }
  /** `ms` defaults to 60_000. */
  | { fault: 'stall'; ms?: number }
  /**
   * `afterBytes`: how many bytes of the response body are sent before the reset (default: a few SSE
   * events, or half of the JSON). `beforeHeaders: true` resets before any response byte is sent.
   */
  | { fault: 'reset'; afterBytes?: number; beforeHeaders?: boolean }
  | { fault: 'midstream_error' }
  | { fault: 'cut_stream' }
  /** `ms` defaults to 60_000. */
  | { fault: 'silent_stream'; ms?: number }
  | { fault: 'overflow'; flavour: OverflowFlavour }
  | { fault: 'truncate_text' }
  | { fault: 'stop_at_limit' }
  | { fault: 'truncate_tool' }
  | { fault: 'finished_cut_json' }
  | { fault: 'unknown_tool' }
  | { fault: 'invalid_args' }
  | { fault: 'fatal'; status?: (typeof FATAL_STATUSES)[number] }
  | { fault: 'quota' };

export function isFaultName(value: unknown): value is FaultName {
  return typeof value === 'string' && (FAULT_NAMES as readonly string[]).includes(value);
}

const SERVER_ERROR_STATUSES = [500, 502, 503, 529] as const;
const FATAL_STATUSES = [400, 401, 403, 404] as const;

/** A field of a fault spec: a number >= 0 (in `unit`), or one of a closed list of values. */
type FaultField = { name: string; unit: string } | { name: string; oneOf: readonly (number | string)[] };

/**
 * The fields each fault takes beyond `fault`; the first is the one the `--script` short form
 * (`server_error:503`, `rate_limit:2`, `overflow:anthropic`) sets.
 */
export const FAULT_FIELDS: Readonly<Partial<Record<FaultName, readonly FaultField[]>>> = {
  rate_limit: [
    { name: 'retryAfterS', unit: 'seconds' },
    { name: 'retryAfterMs', unit: 'milliseconds' },
    { name: 'retryAfterDate', unit: 'seconds from now' },
  ],
  server_error: [{ name: 'status', oneOf: SERVER_ERROR_STATUSES }],
  stall: [{ name: 'ms', unit: 'milliseconds' }],
  silent_stream: [{ name: 'ms', unit: 'milliseconds' }],
  reset: [{ name: 'afterBytes', unit: 'bytes' }],
  overflow: [{ name: 'flavour', oneOf: OVERFLOW_FLAVOURS }],
  fatal: [{ name: 'status', oneOf: FATAL_STATUSES }],
};

/** What a field accepts, for messages: `one of 500, 502, 503, 529` or `a number >= 0 (seconds)`. */
export function describeFaultField(field: FaultField): string {
  return 'oneOf' in field ? `one of ${field.oneOf.join(', ')}` : `a number >= 0 (${field.unit})`;
}

/** Whether `value` is one a field accepts. */
export function fitsFaultField(field: FaultField, value: unknown): boolean {
  if ('oneOf' in field) return (field.oneOf as readonly unknown[]).includes(value);
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/**
 * Throws a BatonError (INVALID_ARGUMENT) on a spec that is not a FaultSpec; `where` names it in the
 * message (e.g. `script[2]`). `overflow` needs its `flavour`; every other field is optional.
 */
export function validateFaultSpec(spec: unknown, where: string): asserts spec is FaultSpec {
  const record = typeof spec === 'object' && spec !== null ? (spec as Record<string, unknown>) : undefined;
  if (!record || !isFaultName(record.fault)) {
    const got = record ? JSON.stringify(record.fault) : JSON.stringify(spec);
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}.fault: unknown fault ${got} (known: ${FAULT_NAMES.join(', ')})`,
    );
  }
  // An overflow needs its flavour; every other field may be left out.
  const required = record.fault === 'overflow';
  for (const field of FAULT_FIELDS[record.fault] ?? []) {
    const value = record[field.name];
    if (value === undefined && !required) continue;
    if (!fitsFaultField(field, value)) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${where}.${field.name}: expected ${describeFaultField(field)}, got ${JSON.stringify(value) ?? 'nothing'}`,
      );
    }
  }
}
