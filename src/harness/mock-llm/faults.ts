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
  | { fault: 'server_error'; status?: 500 | 502 | 503 | 529 }
  /** `ms` defaults to 60_000. */
  | { fault: 'stall'; ms?: number }
  /**
   * `afterBytes`: how many bytes of the response body are sent before the reset (default: a few SSE
   * events, or half of the JSON). `beforeHeaders: true` resets before any response byte is sent.
   */
  | { fault: 'reset'; afterBytes?: number; beforeHeaders?: boolean }
  | { fault: 'midstream_error' }
  | { fault: 'cut_stream' }
  | { fault: 'overflow'; flavour: OverflowFlavour }
  | { fault: 'truncate_text' }
  | { fault: 'stop_at_limit' }
  | { fault: 'truncate_tool' }
  | { fault: 'finished_cut_json' }
  | { fault: 'unknown_tool' }
  | { fault: 'invalid_args' }
  | { fault: 'fatal'; status?: 400 | 401 | 403 | 404 }
  | { fault: 'quota' };

export function isFaultName(value: unknown): value is FaultName {
  return typeof value === 'string' && (FAULT_NAMES as readonly string[]).includes(value);
}

function checkOptionalNumber(
  spec: Record<string, unknown>,
  key: string,
  where: string,
  allowed?: number[],
): void {
  const value = spec[key];
  if (value === undefined) return;
  if (allowed) {
    if (!allowed.includes(value as number)) {
      throw new Error(`${where}.${key}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
    }
    return;
  }
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new Error(`${where}.${key}: expected a non-negative number, got ${JSON.stringify(value)}`);
  }
}

/** Throws on a spec that is not a FaultSpec; `where` names it in the message (e.g. `script[2]`). */
export function validateFaultSpec(spec: unknown, where: string): asserts spec is FaultSpec {
  const record = typeof spec === 'object' && spec !== null ? (spec as Record<string, unknown>) : undefined;
  if (!record || !isFaultName(record.fault)) {
    const got = record ? JSON.stringify(record.fault) : JSON.stringify(spec);
    throw new Error(`${where}.fault: unknown fault ${got} (known: ${FAULT_NAMES.join(', ')})`);
  }
  switch (record.fault) {
    case 'rate_limit':
      checkOptionalNumber(record, 'retryAfterS', where);
      checkOptionalNumber(record, 'retryAfterMs', where);
      checkOptionalNumber(record, 'retryAfterDate', where);
      break;
    case 'server_error':
      checkOptionalNumber(record, 'status', where, [500, 502, 503, 529]);
      break;
    case 'fatal':
      checkOptionalNumber(record, 'status', where, [400, 401, 403, 404]);
      break;
    case 'stall':
      checkOptionalNumber(record, 'ms', where);
      break;
    case 'reset':
      checkOptionalNumber(record, 'afterBytes', where);
      break;
    case 'overflow':
      if (!(OVERFLOW_FLAVOURS as readonly unknown[]).includes(record.flavour)) {
        throw new Error(
          `${where}.flavour: unknown overflow flavour ${JSON.stringify(record.flavour)} ` +
            `(known: ${OVERFLOW_FLAVOURS.join(', ')})`,
        );
      }
      break;
  }
}
