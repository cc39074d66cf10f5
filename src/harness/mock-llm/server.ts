import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { parseAnthropicRequest } from './anthropic-wire.js';
import { badRequestBodyResponse, unknownRouteResponse } from './error-bodies.js';
import { type FaultName, type FaultSpec, validateFaultSpec } from './faults.js';
import { readBody, sendJson } from './http-io.js';
import { parseOpenaiRequest } from './openai-wire.js';
import { createSeededRandom, drawFault, validateFaultMix } from './random.js';
import { answer } from './respond.js';
import type { MockLlmOptions, MockLlmServer, MockRequest, RecordedRequest, Wire } from './types.js';

/**
 * A fault-injecting model-provider server on node:http: OpenAI Chat Completions at
 * `POST /v1/chat/completions` and Anthropic Messages at `POST /v1/messages`, streaming or not.
 * Each request takes the next fault from the script, else draws one from `mix`, else is `ok`.
 * API keys are neither checked nor logged; the server logs nothing.
 */

export type { FaultName, FaultSpec } from './faults.js';
export { FAULT_NAMES } from './faults.js';
export type { OverflowFlavour, ProviderErrorResponse } from './overflow-bodies.js';
export { OVERFLOW_FLAVOURS, OVERFLOW_RESPONSES } from './overflow-bodies.js';
export type { FaultMix } from './random.js';
export { createSeededRandom, drawFault } from './random.js';
export type {
  MockLlmOptions,
  MockLlmServer,
  MockReply,
  MockRequest,
  RecordedRequest,
  Wire,
} from './types.js';

const ROUTES: ReadonlyMap<string, Wire> = new Map([
  ['/v1/chat/completions', 'openai'],
  ['/v1/messages', 'anthropic'],
]);

function checkOptions(options: MockLlmOptions): void {
  const { port, seed } = options;
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65_535)) {
    throw new Error(`mock-llm: port: expected an integer in [0, 65535], got ${String(port)}`);
  }
  if (seed !== undefined && !Number.isFinite(seed)) {
    throw new Error(`mock-llm: seed: expected a finite number, got ${String(seed)}`);
  }
  if (options.mix) validateFaultMix(options.mix);
  options.script?.forEach((spec, i) => {
    validateFaultSpec(spec, `mock-llm: script[${i}]`);
  });
}

/** A drawn fault name as a spec; a drawn overflow uses the request's own provider flavour. */
function specForDrawn(name: FaultName, wire: Wire): FaultSpec {
  if (name === 'overflow') return { fault: 'overflow', flavour: wire === 'openai' ? 'openai' : 'anthropic' };
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

export async function startMockLlmServer(options: MockLlmOptions = {}): Promise<MockLlmServer> {
  checkOptions(options);
  const host = options.host ?? '127.0.0.1';
  const script: FaultSpec[] = [...(options.script ?? [])];
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

  const nextFault = (wire: Wire, request: MockRequest): FaultSpec => {
    const decided = options.decide?.(request);
    if (decided) {
      validateFaultSpec(decided, 'mock-llm: decide()');
      return decided;
    }
    const scripted = script.shift();
    if (scripted) return scripted;
    return options.mix ? specForDrawn(drawFault(random, options.mix), wire) : { fault: 'ok' };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    seq += 1;
    const requestSeq = seq;
    const requestId = `req_mock${String(requestSeq).padStart(6, '0')}`;
    res.setHeader('request-id', requestId);
    res.setHeader('x-request-id', requestId);

    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const wire = req.method === 'POST' ? ROUTES.get(path) : undefined;
    if (!wire) {
      req.resume();
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
    const body = parseJsonObject(raw.text);
    if (typeof body === 'string') {
      const response = badRequestBodyResponse(wire, body);
      sendJson(res, response.status, response.body);
      return;
    }
    const request = wire === 'openai' ? parseOpenaiRequest(body) : parseAnthropicRequest(body);
    const spec = nextFault(wire, request);
    requests.push({
      wire,
      model: request.model,
      stream: request.stream,
      maxTokens: request.maxTokens,
      messagesCount: request.messages.length,
      hasTools: request.tools.length > 0,
      fault: spec.fault,
      at: Date.now(),
    });
    const ctx = { seq: requestSeq, model: request.model, created: Math.floor(Date.now() / 1000) };
    answer({ res, spec, request, ctx, reply: options.reply, schedule });
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
    requests,
    enqueue(...faults: FaultSpec[]) {
      faults.forEach((spec, i) => {
        validateFaultSpec(spec, `mock-llm: enqueue(...)[${i}]`);
      });
      script.push(...faults);
    },
    close,
  };
}
