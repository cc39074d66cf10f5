import type { FaultName } from './faults.js';
import type { FaultMix } from './random.js';
import type { ScriptEntry } from './script-entry.js';

/** The output budget assumed when a request names none. */
export const DEFAULT_MAX_TOKENS = 4096;

/** Identity of one response: ids and timestamps derived from the request's sequence number. */
export interface ResponseContext {
  seq: number;
  model: string;
  /** Unix seconds. */
  created: number;
}

/**
 * Which provider's wire format a request came in on: OpenAI Chat Completions, Anthropic Messages,
 * OpenAI Responses, Google Gemini (generateContent).
 */
export const WIRES = ['openai', 'anthropic', 'responses', 'gemini'] as const;
export type Wire = (typeof WIRES)[number];

/** A request reduced to what the mock needs, whichever wire it came in on. */
export interface MockRequest {
  wire: Wire;
  /** The body's `model`; for Gemini, the model named in the path. */
  model: string;
  /** The URL path, without the query. */
  path: string;
  /**
   * The conversation exactly as sent: Chat `messages`, Anthropic `messages`, Responses `input`
   * items (a string input becomes one user message), Gemini `contents`.
   */
  messages: unknown[];
  /** Declared function tools; `parameters` is their JSON Schema. */
  tools: { name: string; parameters: unknown }[];
  /**
   * Every declared tool of any kind: function tools, the members of a Responses `namespace`, and
   * built-in tools (`web_search`, Gemini `googleSearch`, …) that cannot be called by name here.
   */
  toolCount: number;
  /** `max_completion_tokens` / `max_tokens` / `max_output_tokens` / `maxOutputTokens`; 4096 when absent. */
  maxTokens: number;
  stream: boolean;
  /** The text of every user message, joined with newlines (what `when.promptIncludes` searches). */
  userText: string;
  /** The last non-empty text part of the last user message that has text ('' when none). */
  lastUserText: string;
  /** Whether a tool result has come back (a `tool` message, `tool_result`, `function_call_output`, `functionResponse`). */
  hasToolResult: boolean;
  /** The text of the tool results it carries (Anthropic wire; empty elsewhere), for tests. */
  toolResultText?: string;
  /**
   * The JSON Schema of a requested structured output (Gemini `responseMimeType: application/json`
   * with `responseJsonSchema` / `responseSchema`, Responses `text.format` json_schema, Chat
   * `response_format` json_schema); `{}` when JSON is asked for without a schema.
   */
  outputSchema?: unknown;
  /** The whole parsed JSON body. */
  body: Record<string, unknown>;
}

/** Token counts a reply reports beyond the estimate; both default to 0. */
export interface MockUsage {
  /** Input tokens served from cache (part of the input count). */
  cachedTokens?: number;
  /** Reasoning / thinking tokens (added to the output count). */
  reasoningTokens?: number;
}

/**
 * One tool call of a reply, named as the client declared it. `namespace`: the Responses wire's
 * namespace of that tool (codex 0.171 declares each MCP server's tools in a `namespace` tool named
 * `mcp__<server>`, and runs a call only when its `function_call` item names that namespace); the
 * other wires have no namespaces and ignore it.
 */
export interface MockToolCall {
  name: string;
  namespace?: string;
  arguments: Record<string, unknown>;
}

/** What an `ok` answer contains: text, or tool calls (named as the client declared them). */
export type MockReply = ({ text: string } | { toolCalls: MockToolCall[] }) & { usage?: MockUsage };

/** One line of the server's request log. */
export interface RecordedRequest {
  wire: Wire;
  /** The URL path, without the query. */
  path: string;
  model: string;
  stream: boolean;
  maxTokens: number;
  messagesCount: number;
  hasTools: boolean;
  /** The fault this request was answered with. */
  fault: FaultName;
  /** Index of the script entry that answered it (in the order entries were added), else null. */
  scriptIndex: number | null;
  /** The text of its user messages (what a test checks a prompt by); held in memory only. */
  userText: string;
  /** The text of the tool results it carries (what a tool printed, or a denial); Anthropic wire only. */
  toolResultText: string;
  /** Arrival time, epoch milliseconds. */
  at: number;
}

export interface MockLlmOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /**
   * Each request is answered by the first entry whose `when` matches it (an entry without `when`
   * matches every request), which then counts down its `repeat` (default 1). Without a matching
   * entry, `mix` (if any) decides, else 'ok'. See script-entry.ts.
   */
  script?: ScriptEntry[];
  /** Seed of the PRNG that draws from `mix`; default 1. */
  seed?: number;
  /** Probability per request of each fault, e.g. `{ rate_limit: 0.1 }`; the rest is 'ok'. */
  mix?: FaultMix;
  /**
   * Picks the fault of a request from the request itself, before the script and the mix: for
   * faults that belong to a request rather than to chance (a bad key stays bad, a prompt that
   * overflows keeps overflowing until it is shortened). Return undefined to fall through.
   */
  decide?: (request: MockRequest) => ScriptEntry | undefined;
  /** What an 'ok' answer contains when the script entry has no `reply`; see default-reply.ts. */
  reply?: (request: MockRequest) => MockReply;
}

export interface MockLlmServer {
  /** `http://HOST:PORT`. */
  url: string;
  /** `url + '/v1'`, for `new OpenAI({ baseURL })` (Chat Completions and Responses). */
  openaiBaseUrl: string;
  /** `url`, for `new Anthropic({ baseURL })` and `ANTHROPIC_BASE_URL`. */
  anthropicBaseUrl: string;
  /** `url`, for `GOOGLE_GEMINI_BASE_URL` (requests go to `/v1beta/models/<model>:generateContent`). */
  geminiBaseUrl: string;
  /** Every routed request, in arrival order. */
  requests: RecordedRequest[];
  /** Appends entries to the script. */
  enqueue(...entries: ScriptEntry[]): void;
  /** Stops listening and destroys every open socket, stalled ones included. */
  close(): Promise<void>;
}
