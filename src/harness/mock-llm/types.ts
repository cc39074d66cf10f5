import type { FaultName, FaultSpec } from './faults.js';
import type { FaultMix } from './random.js';

/** The output budget assumed when a request names none. */
export const DEFAULT_MAX_TOKENS = 4096;

/** Identity of one response: ids and timestamps derived from the request's sequence number. */
export interface ResponseContext {
  seq: number;
  model: string;
  /** Unix seconds. */
  created: number;
}

/** Which provider's wire format a request came in on. */
export type Wire = 'openai' | 'anthropic';

/** A request reduced to what the mock needs, whichever wire it came in on. */
export interface MockRequest {
  wire: Wire;
  model: string;
  /** The messages exactly as sent (OpenAI or Anthropic shape). */
  messages: unknown[];
  /** Declared tools; `parameters` is the JSON Schema (`parameters` / `input_schema`). */
  tools: { name: string; parameters: unknown }[];
  /** `max_completion_tokens` or `max_tokens` (OpenAI), `max_tokens` (Anthropic); 4096 when absent. */
  maxTokens: number;
  stream: boolean;
  /** The whole parsed JSON body. */
  body: Record<string, unknown>;
}

/** What an `ok` answer contains: text, or tool calls. */
export type MockReply =
  | { text: string }
  | { toolCalls: { name: string; arguments: Record<string, unknown> }[] };

/** One line of the server's request log. */
export interface RecordedRequest {
  wire: Wire;
  model: string;
  stream: boolean;
  maxTokens: number;
  messagesCount: number;
  hasTools: boolean;
  /** The fault this request was answered with. */
  fault: FaultName;
  /** Arrival time, epoch milliseconds. */
  at: number;
}

export interface MockLlmOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Consumed one per request, in order; when empty, `mix` (if any) decides, else 'ok'. */
  script?: FaultSpec[];
  /** Seed of the PRNG that draws from `mix`; default 1. */
  seed?: number;
  /** Probability per request of each fault, e.g. `{ rate_limit: 0.1 }`; the rest is 'ok'. */
  mix?: FaultMix;
  /**
   * Picks the fault of a request from the request itself, before the script and the mix: for
   * faults that belong to a request rather than to chance (a bad key stays bad, a prompt that
   * overflows keeps overflowing until it is shortened). Return undefined to fall through.
   */
  decide?: (request: MockRequest) => FaultSpec | undefined;
  /** What an 'ok' answer contains; see default-reply.ts for the default. */
  reply?: (request: MockRequest) => MockReply;
}

export interface MockLlmServer {
  /** `http://HOST:PORT`. */
  url: string;
  /** `url + '/v1'`, for `new OpenAI({ baseURL })`. */
  openaiBaseUrl: string;
  /** `url`, for `new Anthropic({ baseURL })`. */
  anthropicBaseUrl: string;
  /** Every routed request, in arrival order. */
  requests: RecordedRequest[];
  /** Appends faults to the script. */
  enqueue(...faults: FaultSpec[]): void;
  /** Stops listening and destroys every open socket, stalled ones included. */
  close(): Promise<void>;
}
