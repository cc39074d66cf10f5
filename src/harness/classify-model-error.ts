import type { ModelFailure, ModelFailureKind } from './types.js';

export interface ClassifyModelErrorContext {
  /** `false` when a mid-stream failure must not be replayed (part of the answer was already used). */
  replaySafe?: boolean;
  /** Epoch milliseconds, to read a `retry-after` HTTP date; without it such dates are ignored. */
  now?: number;
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
/** Last resort, on the message text. */
const TEXT_RULES: ReadonlyArray<readonly [RegExp, string]> = [
  [/timed out|timeout/i, 'timeout'],
  [
    /connection error|socket hang up|fetch failed|network error|\b(ECONNRESET|ECONNREFUSED|EPIPE)\b/i,
    'connection',
  ],
  [/overloaded/i, 'overloaded'],
  [/rate limit|too many requests/i, 'rate_limited'],
  [/internal server error|bad gateway|service unavailable/i, 'server_error'],
  [/invalid (x-)?api[ -]key|unauthori[sz]ed|authentication/i, 'auth'],
  [/model[^\n]{0,60}(not found|does not exist)|unknown model/i, 'model_not_found'],
];

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
  let verdict = classifyFacts(facts);
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

function classifyFacts(f: ErrorFacts): Verdict {
  const settled = detectOverflow(f) ?? detectHopeless(f);
  if (settled) return settled;
  const base = byReason(classifyStructured(f) ?? classifyText(f));
  const shouldRetry = f.headers['x-should-retry']?.trim().toLowerCase();
  if (shouldRetry === 'true' && base.kind !== 'transient') return byReason('should_retry');
  if (shouldRetry === 'false' && base.kind === 'transient') return byReason('should_not_retry');
  return base;
}

/** Failures no wait can fix, even on a 429 or with `x-should-retry: true`. */
function detectHopeless(f: ErrorFacts): Verdict | undefined {
  // OpenAI/Groq 429 "Request too large for gpt-4o in organization org-… on tokens per min (TPM):
  // Limit 30000, Requested 342389." (vanna-ai/vanna-flask#11, continuedev/continue#10602).
  if (/request too large for .{0,300}?tokens per min/is.test(f.text)) {
    return byReason('rate_window_too_large');
  }
  const clientSide = f.status === undefined || f.status < 500;
  // Azure 400 code content_filter "… triggering Azure OpenAI's content management policy"; OpenAI
  // content_policy_violation.
  const policyCode = /content_policy_violation|content_filter/.test(`${f.code} ${f.type}`);
  if (clientSide && (policyCode || /content (management )?policy|safety system/i.test(f.text))) {
    return byReason('content_policy');
  }
  const quotaCode = [f.code, f.type].some((v) => v === 'insufficient_quota' || v === 'billing_error');
  // OpenAI 429 insufficient_quota "You exceeded your current quota, please check your plan and billing
  // details."; Anthropic 400 "Your credit balance is too low to access the Anthropic API. Please go to
  // Plans & Billing …"; OpenRouter 402 "This request requires more credits". A ".../account/billing"
  // link is not enough: OpenAI's free-tier *rate limit* text ends with one.
  const quotaText = /exceeded your current quota|credit balance is too low|(?<!\/)\bbilling\b|more credits/i;
  if (quotaCode || f.status === 402 || (clientSide && quotaText.test(f.text))) {
    return byReason('quota_exhausted');
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
  for (const [pattern, reason] of TEXT_RULES) if (pattern.test(f.text)) return reason;
  return f.midStream ? 'stream_interrupted' : 'unknown';
}

function byReason(reason: string): Verdict {
  return { kind: TRANSIENT_REASONS.has(reason) ? 'transient' : 'fatal', reason };
}

// ---- overflow ------------------------------------------------------------------------------

type Numbers = { limit?: number; input?: number; output?: number; kind?: ModelFailureKind };
type Read = (n: (group: number) => number | undefined) => Numbers;
const limitInput: Read = (n) => ({ limit: n(1), input: n(2) });
const inputLimit: Read = (n) => ({ input: n(1), limit: n(2) });

/** Real provider texts, most specific first. `n(i)` reads capture group i as a number ("242,201" too). */
const OVERFLOW_RULES: ReadonlyArray<readonly [RegExp, Read]> = [
  // vLLM ≥0.10: "'max_tokens' or 'max_completion_tokens' is too large: 2000. This model's maximum context
  // length is 4096 tokens and your request has 2104 input tokens (2000 > 4096 - 2104)."
  // (claude-code-best/claude-code#272; vllm serving_engine.py)
  [
    /is too large: ([\d,]+)\.? this model's maximum context length is ([\d,]+) tokens and your request has ([\d,]+) input tokens/i,
    (n) => ({ output: n(1), limit: n(2), input: n(3) }),
  ],
  // OpenAI, Azure OpenAI, older vLLM, DeepSeek: "This model's maximum context length is 4096 tokens.
  // However, you requested 4130 tokens (3130 in the messages, 1000 in the completion). Please reduce the
  // length of the messages or completion." (Chanzhaoyu/chatgpt-web#354, Azure/azure-sdk-for-net#41892);
  // "(6683 in the messages, 730 in the functions, and 800 in the completion)" (FoundationAgents/
  // OpenManus#62); legacy "(3860 in your prompt; 256 for the completion)" (run-llama/llama_index#948).
  [
    /maximum context length is ([\d,]+) tokens[.,]? however,? you requested ([\d,]+) tokens \(([\d,]+) in (?:the messages|your prompt)[,;] (?:([\d,]+) in the functions, (?:and )?)?([\d,]+) (?:in|for) the completion\)/i,
    (n) => ({ limit: n(1), input: (n(3) ?? 0) + (n(4) ?? 0), output: n(5) }),
  ],
  // OpenRouter: "This endpoint's maximum context length is 131072 tokens. However, you requested about
  // 141607 tokens (10535 of text input, 131072 in the output)." (Aider-AI/aider#3721);
  // "(230395 of text input, 4203 of tool input, 16000 in the output)" (OpenHands/OpenHands#9937).
  [
    /maximum context length is ([\d,]+) tokens\.? however,? you requested about ([\d,]+) tokens \(([\d,]+) of text input, (?:([\d,]+) of tool input, )?([\d,]+) in the output\)/i,
    (n) => ({ limit: n(1), input: (n(3) ?? 0) + (n(4) ?? 0), output: n(5) }),
  ],
  // OpenAI, Azure (code context_length_exceeded): "This model's maximum context length is 128000 tokens.
  // However, your messages resulted in 204308 tokens." (webtimemachine/wtm2#579, assafelovic/
  // gpt-researcher#680); vLLM: "… However, your request has 40000 input tokens." and, without max_tokens,
  // "… However, you requested 5000 tokens in the messages, Please reduce …" (vllm serving_engine.py).
  [
    /maximum context length is ([\d,]+) tokens\.? however,? (?:your messages resulted in|your request has|you requested) ([\d,]+)(?= tokens\.| input tokens| tokens in the messages)/i,
    limitInput,
  ],
  // Anthropic: "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease
  // input length or `max_tokens` and try again" (docker/docker-agent#569, anthropics/claude-code#228).
  [
    /input length and `?max_tokens`? exceed context limit: ([\d,]+) \+ ([\d,]+) > ([\d,]+)/i,
    (n) => ({ input: n(1), output: n(2), limit: n(3) }),
  ],
  // Anthropic, also as a Bedrock ValidationException: "prompt is too long: 208000 tokens > 200000
  // maximum" (earendil-works/pi#102, daisuke-awaji/moca#254).
  [/prompt is too long: ([\d,]+) tokens > ([\d,]+) maximum/i, inputLimit],
  // Gemini: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)."
  // (google-gemini/gemini-cli#6678)
  [
    /input token count \(?([\d,]+)\)? exceeds the maximum number of tokens allowed \(?([\d,]+)\)?/i,
    inputLimit,
  ],
  // Mistral: "Prompt contains 40687 tokens and 0 draft tokens, too large for model with 32768 maximum
  // context length" (Mistral docs "known limitations", quoted in provider test suites).
  [
    /prompt contains ([\d,]+) tokens.{0,60}?too large for model with ([\d,]+) maximum context length/i,
    inputLimit,
  ],
  // Bedrock: "Too many input tokens. Max input tokens: 8192, request input token count: 9279".
  [/max input tokens: ([\d,]+), request input token count: ([\d,]+)/i, limitInput],
  // xAI: "This model's maximum prompt length is 131072 but the request contains 149617 tokens."
  [/maximum prompt length is ([\d,]+) but the request contains ([\d,]+) tokens/i, limitInput],
  // OpenAI: "max_tokens is too large: 6000. This model supports at most 4096 completion tokens"
  // (diffbot/code-gpt-docs#284): the output ceiling, not the window, so no limitTokens.
  [
    /max_tokens is too large: ([\d,]+)\.? this model supports at most/i,
    (n) => ({ output: n(1), kind: 'output_overflow' }),
  ],
  // vLLM, no max_tokens sent and window − prompt < 1: "max_tokens must be at least 1, got -160"
  // (vllm-project/vllm#5700): the prompt alone fills the window.
  [/max_tokens must be at least 1, got -?[\d,]+/i, () => ({ kind: 'input_overflow' })],
  // DeepSeek, OpenRouter without a breakdown: "… maximum context length is 200000 tokens. However, you
  // requested about 250000 tokens".
  [/maximum context length is ([\d,]+) tokens/i, (n) => ({ limit: n(1) })],
  // Bedrock "Input is too long for requested model." (aws-samples/bedrock-chat#95), "too many input
  // tokens"; Ollama "the input length exceeds the context length" and "prompt too long; exceeded max
  // context length by 4 tokens" (quoted in openclaw's tests); OpenAI Responses "Your input exceeds the
  // context window of this model"; Azure "Please reduce the length of the messages or completion".
  [
    /input is too long for requested model|too many input tokens|input length exceeds the context length|prompt too long; exceeded (max )?context length|input exceeds the context window|context_length_exceeded|context_window_exceeded|reduce the length of the messages/i,
    () => ({}),
  ],
];

function detectOverflow(f: ErrorFacts): Verdict | undefined {
  for (const [pattern, read] of OVERFLOW_RULES) {
    const match = pattern.exec(f.text);
    if (match)
      return overflowVerdict(
        read((i) => toNumber(match[i])),
        'context_overflow',
      );
  }
  if (f.code === 'context_length_exceeded') return overflowVerdict({}, 'context_overflow');
  // Anthropic 413 request_too_large "Request exceeds the maximum allowed number of bytes." (Anthropic
  // errors page); a 413 from any gateway means the same: the input must shrink.
  if (f.status === 413 || f.type === 'request_too_large') return overflowVerdict({}, 'request_too_large');
  return undefined;
}

/** Output overflow only when the input alone fits: otherwise a smaller output budget cannot help. */
function overflowVerdict(n: Numbers, reason: string): Verdict {
  const split = n.output !== undefined && n.input !== undefined && n.limit !== undefined;
  const outputOnly = split && (n.input as number) < (n.limit as number);
  const verdict: Verdict = { kind: n.kind ?? (outputOnly ? 'output_overflow' : 'input_overflow'), reason };
  if (n.limit !== undefined) verdict.limitTokens = n.limit;
  if (n.input !== undefined) verdict.inputTokens = n.input;
  if (n.output !== undefined) verdict.requestedOutputTokens = n.output;
  return verdict;
}

function toNumber(text: string | undefined): number | undefined {
  const value = text === undefined ? Number.NaN : Number(text.replaceAll(',', ''));
  return Number.isFinite(value) ? value : undefined;
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
