import { type ContextOverflowNumbers, readContextOverflow } from '../core/context-overflow-texts.js';
import {
  type ProviderErrorCategory,
  providerErrorCategory,
  withStatedWait,
} from '../core/provider-error-texts.js';
import type { ModelFailure, ModelFailureKind } from './types.js';

interface ClassifyModelErrorContext {
  /** `false` when a mid-stream failure must not be replayed (part of the answer was already used). */
  replaySafe?: boolean;
  /** Epoch milliseconds, to read a `retry-after` HTTP date; without it such dates are ignored. */
  now?: number;
  /**
   * A wait the caller read where this classifier cannot (an agent CLI's "Please retry in 34s"): a
   * quota text with a stated wait is a rate limit, as a 429 with `retry-after` is.
   */
  statedWaitMs?: number;
}

interface ErrorFacts {
  status: number | undefined;
  code: string | undefined;
  type: string | undefined;
  headers: Record<string, string>;
  networkCode: string | undefined;
  timedOut: boolean;
  midStream: boolean;
  /** Error names along the cause chain (`name` and constructor name). */
  names: Set<string>;
  /** The provider's own message, else the error's. */
  message: string;
  /** Every message along the cause chain, for the text rules. */
  text: string;
}

interface Verdict {
  kind: ModelFailureKind;
  reason: string;
  limitTokens?: number;
  inputTokens?: number;
  requestedOutputTokens?: number;
}

const MESSAGE_MAX_CHARS = 300;
const FAILURE_CLASS = {
  transient: 'transient',
  input_overflow: 'invalid',
  output_overflow: 'invalid',
  fatal: 'fatal',
} as const;
const TRANSIENT_REASONS: ReadonlySet<string> = new Set([
  'rate_limited',
  'overloaded',
  'server_error',
  'timeout',
  'connection',
  'conflict',
  'should_retry',
  'stream_interrupted',
]);
/** Node and undici codes of a dropped or refused connection, then of a timeout. */
const NETWORK_CODES: ReadonlySet<string> = new Set(
  'ECONNRESET ECONNREFUSED ECONNABORTED EPIPE EAI_AGAIN ENETUNREACH EHOSTUNREACH UND_ERR_SOCKET'.split(' '),
);
const TIMEOUT_CODES: ReadonlySet<string> = new Set(
  'ETIMEDOUT UND_ERR_CONNECT_TIMEOUT UND_ERR_HEADERS_TIMEOUT UND_ERR_BODY_TIMEOUT'.split(' '),
);
const STATUS_REASONS: ReadonlyMap<number, string> = new Map([
  [400, 'invalid_request'],
  [401, 'auth'],
  [403, 'permission'],
  [404, 'model_not_found'],
  [408, 'timeout'],
  [409, 'conflict'],
  [422, 'invalid_request'],
  [429, 'rate_limited'],
  [529, 'overloaded'],
]);
/** Anthropic's error `type`s (also sent mid-stream, where there is no status) and OpenAI's. */
const TYPE_REASONS: ReadonlyMap<string, string> = new Map([
  ['overloaded_error', 'overloaded'],
  ['rate_limit_error', 'rate_limited'],
  ['api_error', 'server_error'],
  ['server_error', 'server_error'],
  ['timeout_error', 'timeout'],
  ['authentication_error', 'auth'],
  ['permission_error', 'permission'],
  ['not_found_error', 'model_not_found'],
  ['invalid_request_error', 'invalid_request'],
]);
/** The model-call reason of each category of provider text (the shared table in core). */
const CATEGORY_REASONS: Readonly<Record<ProviderErrorCategory, string>> = {
  quota: 'quota_exhausted',
  billing: 'quota_exhausted',
  context_overflow: 'context_overflow',
  rate_window_too_large: 'rate_window_too_large',
  content_policy: 'content_policy',
  auth: 'auth',
  permission: 'permission',
  model_not_found: 'model_not_found',
  rate_limit: 'rate_limited',
  overloaded: 'overloaded',
  server_error: 'server_error',
  timeout: 'timeout',
  connection: 'connection',
};

/**
 * Turns whatever a provider call threw (a `ModelCallError`, an SDK `APIError`, a Node network
 * error, an `AbortError`) into a {@link ModelFailure}. Pure: no I/O, no clock (`now` is passed in).
 *
 * Order: an overflow; then a request no wait can fix (larger than the rate window, refused by a content
 * policy, quota gone); then `x-should-retry`; then structured fields (HTTP status, error `type`,
 * timeouts, network `code`); the message text last. Anything unrecognised is fatal, `reason: 'unknown'`.
 * A transient mid-stream failure becomes fatal when `replaySafe` is `false`.
 */
export function classifyModelError(error: unknown, context: ClassifyModelErrorContext = {}): ModelFailure {
  const facts = readErrorFacts(error);
  let verdict = classifyFacts(facts, context.statedWaitMs !== undefined);
  if (verdict.kind === 'transient' && facts.midStream && context.replaySafe === false) {
    verdict = byReason('mid_stream_not_replay_safe');
  }
  const { kind, reason } = verdict;
  const message = cut(facts.message, MESSAGE_MAX_CHARS);
  const failure: ModelFailure = { kind, failureClass: FAILURE_CLASS[kind], reason, message };
  const retryAfterMs = parseRetryAfterMs(facts.headers, context.now);
  if (facts.status !== undefined) failure.status = facts.status;
  if (facts.code !== undefined) failure.code = facts.code;
  if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs;
  if (verdict.limitTokens !== undefined) failure.limitTokens = verdict.limitTokens;
  if (verdict.inputTokens !== undefined) failure.inputTokens = verdict.inputTokens;
  if (verdict.requestedOutputTokens !== undefined) {
    failure.requestedOutputTokens = verdict.requestedOutputTokens;
  }
  return failure;
}

/**
 * The wait a response asked for, uncapped: `retry-after-ms` (float milliseconds, an OpenAI/Anthropic
 * SDK convention) first, then `retry-after` (seconds, or an HTTP date read against `now`).
 */
export function parseRetryAfterMs(headers: Record<string, string>, now?: number): number | undefined {
  const ms = Number.parseFloat(headers['retry-after-ms'] ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers['retry-after']?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000;
  const at = Date.parse(value);
  if (now === undefined || Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

function classifyFacts(f: ErrorFacts, waitStated: boolean): Verdict {
  const settled = detectOverflow(f) ?? detectHopeless(f, waitStated);
  if (settled) return settled;
  const base = byReason(classifyStructured(f) ?? classifyText(f));
  const shouldRetry = f.headers['x-should-retry']?.trim().toLowerCase();
  if (shouldRetry === 'true' && base.kind !== 'transient') return byReason('should_retry');
  if (shouldRetry === 'false' && base.kind === 'transient') return byReason('should_not_retry');
  return base;
}

/** Failures no wait can fix, even on a 429 or with `x-should-retry: true`. */
function detectHopeless(f: ErrorFacts, waitStated: boolean): Verdict | undefined {
  const clientSide = f.status === undefined || f.status < 500;
  const category = providerErrorCategory(f.text);
  // A request larger than the rate window, on a 429 whatever its retry-after says.
  if (category === 'rate_window_too_large') return byReason('rate_window_too_large');
  // Azure 400 code content_filter; OpenAI content_policy_violation; or the words (shared table).
  const policyCode = /content_policy_violation|content_filter/.test(`${f.code} ${f.type}`);
  if (clientSide && (policyCode || category === 'content_policy')) return byReason('content_policy');
  const quotaCode = [f.code, f.type].some((v) => v === 'insufficient_quota' || v === 'billing_error');
  if (quotaCode || f.status === 402) return byReason('quota_exhausted');
  // Quota and billing texts: one that states its wait (a 429 with retry-after, or a wait the caller
  // read) is a rate limit, not spent credit.
  if (clientSide && (category === 'quota' || category === 'billing')) {
    const stated = waitStated || (f.status === 429 && parseRetryAfterMs(f.headers) !== undefined);
    return byReason(CATEGORY_REASONS[withStatedWait(category, stated)]);
  }
  return undefined;
}

function classifyStructured(f: ErrorFacts): string | undefined {
  const byType = f.type === undefined ? undefined : TYPE_REASONS.get(f.type);
  if (f.status !== undefined && f.status >= 500 && f.status !== 529) {
    return byType !== undefined && TRANSIENT_REASONS.has(byType) ? byType : 'server_error';
  }
  if (f.status !== undefined) {
    return STATUS_REASONS.get(f.status) ?? (f.status >= 400 ? 'invalid_request' : byType);
  }
  if (byType !== undefined) return byType;
  const aborted = f.names.has('AbortError') || f.names.has('APIUserAbortError');
  if (f.timedOut || f.names.has('TimeoutError') || f.names.has('APIConnectionTimeoutError')) return 'timeout';
  if (aborted && /timeout|timed out/i.test(f.text)) return 'timeout';
  if (f.networkCode !== undefined && TIMEOUT_CODES.has(f.networkCode)) return 'timeout';
  if (aborted) return 'aborted';
  if (f.networkCode !== undefined && NETWORK_CODES.has(f.networkCode)) return 'connection';
  return f.names.has('APIConnectionError') ? 'connection' : undefined;
}

function classifyText(f: ErrorFacts): string {
  const category = providerErrorCategory(f.text);
  if (category !== undefined) return CATEGORY_REASONS[category];
  return f.midStream ? 'stream_interrupted' : 'unknown';
}

function byReason(reason: string): Verdict {
  return { kind: TRANSIENT_REASONS.has(reason) ? 'transient' : 'fatal', reason };
}

// ---- overflow ------------------------------------------------------------------------------

function detectOverflow(f: ErrorFacts): Verdict | undefined {
  const numbers = readContextOverflow(f.text);
  if (numbers) return overflowVerdict(numbers, 'context_overflow');
  if (f.code === 'context_length_exceeded') return overflowVerdict({}, 'context_overflow');
  // Anthropic 413 request_too_large "Request exceeds the maximum allowed number of bytes." (Anthropic
  // errors page); a 413 from any gateway means the same: the input must shrink.
  if (f.status === 413 || f.type === 'request_too_large') return overflowVerdict({}, 'request_too_large');
  return undefined;
}

/** Output overflow only when the input alone fits: otherwise a smaller output budget cannot help. */
function overflowVerdict(n: ContextOverflowNumbers, reason: string): Verdict {
  const split = n.output !== undefined && n.input !== undefined && n.limit !== undefined;
  const outputOnly = split && (n.input as number) < (n.limit as number);
  const part = n.part ?? (outputOnly ? 'output' : 'input');
  const verdict: Verdict = { kind: part === 'output' ? 'output_overflow' : 'input_overflow', reason };
  if (n.limit !== undefined) verdict.limitTokens = n.limit;
  if (n.input !== undefined) verdict.inputTokens = n.input;
  if (n.output !== undefined) verdict.requestedOutputTokens = n.output;
  return verdict;
}

// ---- reading an unknown thrown value -------------------------------------------------------

function readErrorFacts(error: unknown): ErrorFacts {
  const top = asRecord(error);
  const facts: ErrorFacts = {
    status: undefined,
    code: undefined,
    type: undefined,
    headers: {},
    networkCode: undefined,
    timedOut: top.timedOut === true,
    midStream: top.midStream === true,
    names: new Set(),
    message: typeof error === 'string' ? error : '',
    text: '',
  };
  const texts: string[] = typeof error === 'string' ? [error] : [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const e = asRecord(current);
    // OpenAI SDK: `error` is `{ message, type, code }`; Anthropic SDK: `{ type: 'error', error: {...} }`.
    const body = asRecord(e.error);
    const inner = typeof body.error === 'object' && body.error !== null ? asRecord(body.error) : body;
    facts.status ??=
      integer(e.status) ?? integer(e.statusCode) ?? integer(asRecord(e.$metadata).httpStatusCode);
    const code = text(e.code);
    if (code !== undefined && /^(E[A-Z_]+|UND_ERR_[A-Z_]+)$/.test(code)) facts.networkCode ??= code;
    else facts.code ??= code ?? text(inner.code);
    facts.networkCode ??= text(e.networkCode);
    const type = text(e.type) ?? text(inner.type);
    if (type !== 'error') facts.type ??= type;
    if (Object.keys(facts.headers).length === 0) facts.headers = readHeaders(e.headers);
    for (const name of [text(e.name), constructorName(current)]) if (name) facts.names.add(name);
    const providerMessage = text(inner.message) ?? text(e.apiMessage);
    for (const message of [providerMessage, text(e.message)]) if (message) texts.push(message);
    facts.message ||= providerMessage ?? text(e.message) ?? '';
    current = e.cause;
  }
  facts.message ||= facts.code ?? facts.networkCode ?? 'unknown error';
  facts.text = texts.join('\n');
  return facts;
}

/** SDK errors carry a fetch `Headers`; a ModelCallError a lower-case record. */
function readHeaders(headers: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const h = headers as { get?: unknown; forEach?: (fn: (value: string, key: string) => void) => void };
  if (typeof h?.get === 'function' && typeof h.forEach === 'function') {
    h.forEach((value, key) => {
      out[String(key).toLowerCase()] = String(value);
    });
    return out;
  }
  for (const [key, value] of Object.entries(asRecord(headers))) {
    if (typeof value === 'string' || typeof value === 'number') out[key.toLowerCase()] = String(value);
  }
  return out;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function integer(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

function constructorName(value: unknown): string | undefined {
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== 'Object' && name !== 'Error' ? name : undefined;
}

function cut(message: string, max: number): string {
  return message.length <= max ? message : `${message.slice(0, max - 1)}…`;
}
