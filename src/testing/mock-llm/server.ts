import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { BatonError } from '../../core/errors.js';
import { parseAnthropicRequest } from './anthropic-wire.js';
import { badRequestBodyResponse, unknownRouteResponse } from './error-bodies.js';
import type { FaultName, FaultSpec } from './faults.js';
import { geminiBadRequestResponse } from './gemini-error-bodies.js';
import { parseGeminiRequest } from './gemini-wire.js';
import { readBody, sendJson } from './http-io.js';
import { parseOpenaiRequest } from './openai-wire.js';
import { createSeededRandom, drawFault, validateFaultMix } from './random.js';
import { answer } from './respond.js';
import { parseResponsesRequest } from './responses-wire.js';
import { type Route, routeOf } from './routes.js';
import { type ScriptEntry, validateScriptEntry } from './script-entry.js';
import { createScriptQueue } from './script-match.js';
import type { MockLlmOptions, MockLlmServer, MockRequest, RecordedRequest, Wire } from './types.js';

/**
 * A fault-injecting model-provider server on node:http, streaming or not: OpenAI Chat Completions
 * at `POST /v1/chat/completions`, OpenAI Responses at `POST /v1/responses`, Anthropic Messages at
 * `POST /v1/messages`, Gemini at `POST /v1beta/models/<model>:generateContent` and
 * `:streamGenerateContent?alt=sse`. Each request is answered by the first script entry whose `when`
 * matches it, else by a fault drawn from `mix`, else `ok`. API keys are neither checked nor logged;
 * the server logs nothing.
 */

export type { FaultName, FaultSpec } from './faults.js';
export { FAULT_NAMES } from './faults.js';
export type { OverflowFlavour, ProviderErrorResponse } from './overflow-bodies.js';
export { OVERFLOW_FLAVOURS, OVERFLOW_RESPONSES } from './overflow-bodies.js';
export type { FaultMix } from './random.js';
export { createSeededRandom, drawFault } from './random.js';
export type { ScriptEntry, ScriptWhen } from './script-entry.js';
export type {
  MockLlmOptions,
  MockLlmServer,
  MockReply,
  MockRequest,
  MockUsage,
  RecordedRequest,
  Wire,
} from './types.js';

function checkOptions(options: MockLlmOptions): void {
  const { port, seed } = options;
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65_535)) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `mock-llm: port: expected an integer in [0, 65535], got ${String(port)}`,
    );
  }
  if (seed !== undefined && !Number.isFinite(seed)) {
    throw new BatonError('INVALID_ARGUMENT', `mock-llm: seed: expected a finite number, got ${String(seed)}`);
  }
  if (options.mix) validateFaultMix(options.mix);
  options.script?.forEach((entry, i) => {
    validateScriptEntry(entry, `mock-llm: script[${i}]`);
  });
}

/** A drawn fault name as a spec; a drawn overflow uses the request's own provider flavour. */
function specForDrawn(name: FaultName, wire: Wire): FaultSpec {
  if (name === 'overflow') {
    const flavour = wire === 'anthropic' ? 'anthropic' : wire === 'gemini' ? 'gemini' : 'openai';
    return { fault: 'overflow', flavour };
  }
  return { fault: name } as FaultSpec;
}

function parseJsonObject(text: string): Record<string, unknown> | string {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
    return 'the body must be a JSON object';
  } catch (error) {
    return error instanceof Error ? error.message : 'invalid JSON';
  }
}

function parseRequest(route: Route, body: Record<string, unknown>): MockRequest {
  switch (route.wire) {
    case 'openai':
      return parseOpenaiRequest(body, route.path);
    case 'anthropic':
      return parseAnthropicRequest(body, route.path);
    case 'responses':
      return parseResponsesRequest(body, route.path);
    case 'gemini':
      return parseGeminiRequest(body, route);
  }
}

/** The fault spec of an entry, without the script fields (what respond.ts renders). */
function faultOf(entry: ScriptEntry): FaultSpec {
  const { reply: _reply, when: _when, repeat: _repeat, ...spec } = entry;
  return spec as FaultSpec;
}

export async function startMockLlmServer(options: MockLlmOptions = {}): Promise<MockLlmServer> {
  checkOptions(options);
  const host = options.host ?? '127.0.0.1';
  const script = createScriptQueue(options.script ?? []);
  const random = createSeededRandom(options.seed ?? 1);
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let seq = 0;

  const schedule = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
    return () => {
      clearTimeout(timer);
      timers.delete(timer);
    };
  };

  /** The entry that answers `request` and its script index (null: decide(), the mix or the default). */
  const nextEntry = (request: MockRequest): { entry: ScriptEntry; index: number | null } => {
    const decided = options.decide?.(request);
    if (decided) {
      validateScriptEntry(decided, 'mock-llm: decide()');
      return { entry: decided, index: null };
    }
    const scripted = script.take(request);
    if (scripted) return scripted;
    const entry = options.mix
      ? specForDrawn(drawFault(random, options.mix), request.wire)
      : { fault: 'ok' as const };
    return { entry, index: null };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    seq += 1;
    const requestSeq = seq;
    const requestId = `req_mock${String(requestSeq).padStart(6, '0')}`;
    res.setHeader('request-id', requestId);
    res.setHeader('x-request-id', requestId);

    const route = routeOf(req.method, req.url);
    if (!route) {
      req.resume();
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const response = unknownRouteResponse(req.method ?? 'GET', path);
      sendJson(res, response.status, response.body);
      return;
    }
    const raw = await readBody(req);
    if (!raw.ok) {
      if (raw.reason === 'too_large') {
        sendJson(res, 413, {
          error: { type: 'request_too_large', message: 'Request exceeds the maximum size' },
        });
      }
      return;
    }
    if (route.wire === 'gemini' && route.stream && !route.sse) {
      const response = geminiBadRequestResponse(
        'mock-llm: streamGenerateContent is served as SSE only: add ?alt=sse',
      );
      sendJson(res, response.status, response.body);
      return;
    }
    const body = parseJsonObject(raw.text);
    if (typeof body === 'string') {
      const response = badRequestBodyResponse(route.wire, body);
      sendJson(res, response.status, response.body);
      return;
    }
    const request = parseRequest(route, body);
    const { entry, index } = nextEntry(request);
    const spec = faultOf(entry);
    requests.push({
      wire: request.wire,
      path: request.path,
      model: request.model,
      stream: request.stream,
      maxTokens: request.maxTokens,
      messagesCount: request.messages.length,
      hasTools: request.toolCount > 0,
      fault: spec.fault,
      scriptIndex: index,
      userText: request.userText,
      toolResultText: request.toolResultText ?? '',
      at: Date.now(),
    });
    const ctx = { seq: requestSeq, model: request.model, created: Math.floor(Date.now() / 1000) };
    const scriptedReply = entry.reply;
    const reply = scriptedReply ? () => scriptedReply : options.reply;
    answer({ res, spec, request, ctx, reply, schedule });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A bug in a `reply` callback or here: answer 500 if still possible, else drop the connection.
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      sendJson(res, 500, {
        error: { message: `mock-llm: ${message}`, type: 'server_error', param: null, code: null },
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
    return closing;
  };

  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    anthropicBaseUrl: url,
    geminiBaseUrl: url,
    requests,
    enqueue(...entries: ScriptEntry[]) {
      entries.forEach((entry, i) => {
        validateScriptEntry(entry, `mock-llm: enqueue(...)[${i}]`);
      });
      script.add(entries);
    },
    close,
  };
}
