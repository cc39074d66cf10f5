import type { ServerResponse } from 'node:http';
import { anthropicStreamFrames, renderAnthropicMessage } from './anthropic-wire.js';
import { type CompletionFault, type CompletionPlan, planCompletion } from './completion-plan.js';
import { defaultReply, lastUserText } from './default-reply.js';
import {
  fatalResponse,
  midstreamErrorPayload,
  quotaResponse,
  rateLimitResponse,
  rateWindowTooLargeResponse,
  serverErrorResponse,
} from './error-bodies.js';
import type { FaultSpec } from './faults.js';
import { jsonBytes, resetAfter, SSE_HEADERS, sendJson, sendSse, sseFrame } from './http-io.js';
import { openaiStreamFrames, renderOpenaiCompletion, wantsUsage } from './openai-wire.js';
import { OVERFLOW_RESPONSES, type ProviderErrorResponse } from './overflow-bodies.js';
import type { MockReply, MockRequest, ResponseContext } from './types.js';

export const DEFAULT_STALL_MS = 60_000;

export interface AnswerInput {
  res: ServerResponse;
  spec: FaultSpec;
  request: MockRequest;
  ctx: ResponseContext;
  reply: ((request: MockRequest) => MockReply) | undefined;
  /** Runs `fn` after `ms` unless cancelled; the server clears what is left on close(). */
  schedule: (ms: number, fn: () => void) => () => void;
}

function sendError(res: ServerResponse, response: ProviderErrorResponse): void {
  sendJson(res, response.status, response.body, response.headers);
}

function plan(fault: CompletionFault, input: AnswerInput): CompletionPlan {
  const { request } = input;
  const reply = (input.reply ?? defaultReply)(request);
  return planCompletion(fault, request, reply, () => ({ text: `ok: ${lastUserText(request).slice(0, 40)}` }));
}

function streamFrames(completion: CompletionPlan, input: AnswerInput): string[] {
  return input.request.wire === 'openai'
    ? openaiStreamFrames(completion, input.ctx, wantsUsage(input.request))
    : anthropicStreamFrames(completion, input.ctx);
}

function sendCompletion(completion: CompletionPlan, input: AnswerInput): void {
  const { res, request, ctx } = input;
  if (request.stream) {
    sendSse(res, streamFrames(completion, input));
    return;
  }
  const body =
    request.wire === 'openai'
      ? renderOpenaiCompletion(completion, ctx)
      : renderAnthropicMessage(completion, ctx);
  sendJson(res, 200, body);
}

/** Starts a normal 200 answer, sends `afterBytes` of it (default: a few events / half the JSON), resets. */
function sendReset(spec: Extract<FaultSpec, { fault: 'reset' }>, input: AnswerInput): void {
  const { res, request, ctx } = input;
  if (spec.beforeHeaders) {
    resetAfter(res);
    return;
  }
  const completion = plan('ok', input);
  let full: Buffer;
  let defaultBytes: number;
  if (request.stream) {
    const frames = streamFrames(completion, input);
    full = Buffer.from(frames.join(''), 'utf8');
    defaultBytes = Buffer.byteLength(frames.slice(0, 2).join(''), 'utf8');
    res.writeHead(200, SSE_HEADERS);
  } else {
    const body =
      request.wire === 'openai'
        ? renderOpenaiCompletion(completion, ctx)
        : renderAnthropicMessage(completion, ctx);
    full = jsonBytes(body);
    defaultBytes = Math.floor(full.length / 2);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(full.length) });
  }
  const count = Math.min(spec.afterBytes ?? defaultBytes, full.length - 1);
  res.flushHeaders();
  resetAfter(res, full.subarray(0, Math.max(0, count)));
}

/** Streams the start of a normal answer, then an SSE error event; non-streaming requests get a 500. */
function sendMidstreamError(input: AnswerInput): void {
  const { res, request } = input;
  if (!request.stream) {
    sendError(res, serverErrorResponse(request.wire, 500));
    return;
  }
  const frames = streamFrames(plan('ok', input), input);
  const keep = Math.min(frames.length - 1, request.wire === 'openai' ? 2 : 3);
  const payload = midstreamErrorPayload(request.wire);
  const error = request.wire === 'openai' ? sseFrame(payload) : sseFrame(payload, 'error');
  sendSse(res, [...frames.slice(0, keep), error]);
}

type ErrorSpec = Extract<
  FaultSpec,
  { fault: 'rate_limit' | 'rate_window_too_large' | 'server_error' | 'fatal' | 'quota' | 'overflow' }
>;

const ERROR_FAULTS: ReadonlySet<string> = new Set([
  'rate_limit',
  'rate_window_too_large',
  'server_error',
  'fatal',
  'quota',
  'overflow',
]);

function isErrorSpec(spec: FaultSpec): spec is ErrorSpec {
  return ERROR_FAULTS.has(spec.fault);
}

function errorResponse(spec: ErrorSpec, wire: MockRequest['wire']): ProviderErrorResponse {
  switch (spec.fault) {
    case 'rate_limit':
      return rateLimitResponse(wire, spec.retryAfterS, spec.retryAfterMs);
    case 'rate_window_too_large':
      return rateWindowTooLargeResponse(wire);
    case 'server_error':
      return serverErrorResponse(wire, spec.status);
    case 'fatal':
      return fatalResponse(wire, spec.status);
    case 'quota':
      return quotaResponse(wire);
    case 'overflow':
      return OVERFLOW_RESPONSES[spec.flavour];
  }
}

/** Writes the answer `spec` calls for. */
export function answer(input: AnswerInput): void {
  const { res, spec, request } = input;
  if (isErrorSpec(spec)) {
    sendError(res, errorResponse(spec, request.wire));
  } else if (spec.fault === 'stall') {
    // Nothing is sent; when the time is up the connection is closed without an answer.
    const cancel = input.schedule(spec.ms ?? DEFAULT_STALL_MS, () => res.socket?.destroy());
    res.once('close', cancel);
  } else if (spec.fault === 'reset') {
    sendReset(spec, input);
  } else if (spec.fault === 'midstream_error') {
    sendMidstreamError(input);
  } else {
    sendCompletion(plan(spec.fault, input), input);
  }
}
