import type { ServerResponse } from 'node:http';
import { type CompletionFault, type CompletionPlan, planCompletion } from './completion-plan.js';
import { defaultReply, okText } from './default-reply.js';
import {
  fatalResponse,
  quotaResponse,
  rateLimitResponse,
  rateWindowTooLargeResponse,
  serverErrorResponse,
} from './error-bodies.js';
import type { FaultSpec } from './faults.js';
import { jsonBytes, resetAfter, SSE_HEADERS, sendJson, sendSse } from './http-io.js';
import { OVERFLOW_RESPONSES, type ProviderErrorResponse } from './overflow-bodies.js';
import type { MockReply, MockRequest, ResponseContext } from './types.js';
import { WIRE_RENDERERS } from './wire-render.js';

const DEFAULT_STALL_MS = 60_000;

/** The pause between the frames of a failing stream and its error, so the error comes apart. */
const MIDSTREAM_ERROR_GAP_MS = 30;

interface AnswerInput {
  res: ServerResponse;
  spec: FaultSpec;
  request: MockRequest;
  ctx: ResponseContext;
  /** The reply of an answer built here; undefined: the default reply. */
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
  return planCompletion(fault, request, reply, () => ({ text: okText(request) }));
}

function streamFrames(completion: CompletionPlan, input: AnswerInput): string[] {
  return WIRE_RENDERERS[input.request.wire].frames(completion, input.ctx, input.request);
}

function jsonBody(completion: CompletionPlan, input: AnswerInput): unknown {
  return WIRE_RENDERERS[input.request.wire].body(completion, input.ctx, input.request);
}

function sendCompletion(completion: CompletionPlan, input: AnswerInput): void {
  const { res, request } = input;
  if (request.stream) {
    sendSse(res, streamFrames(completion, input));
    return;
  }
  sendJson(res, 200, jsonBody(completion, input));
}

/** Starts a normal 200 answer, sends `afterBytes` of it (default: a few events / half the JSON), resets. */
function sendReset(spec: Extract<FaultSpec, { fault: 'reset' }>, input: AnswerInput): void {
  const { res, request } = input;
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
    full = jsonBytes(jsonBody(completion, input));
    defaultBytes = Math.floor(full.length / 2);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(full.length) });
  }
  const count = Math.min(spec.afterBytes ?? defaultBytes, full.length - 1);
  res.flushHeaders();
  resetAfter(res, full.subarray(0, Math.max(0, count)));
}

/**
 * Streams the start of a normal answer, then (a moment later) the wire's error frame, and ends the
 * stream; non-streaming requests get a 500.
 */
function sendMidstreamError(input: AnswerInput): void {
  const { res, request, ctx } = input;
  if (!request.stream) {
    sendError(res, serverErrorResponse(request.wire, 500));
    return;
  }
  const renderer = WIRE_RENDERERS[request.wire];
  const frames = streamFrames(plan('ok', input), input);
  const keep = Math.max(0, Math.min(frames.length - 1, renderer.keepBeforeError));
  res.writeHead(200, SSE_HEADERS);
  for (const frame of frames.slice(0, keep)) res.write(frame);
  const cancel = input.schedule(MIDSTREAM_ERROR_GAP_MS, () => {
    res.end(renderer.errorFrame(ctx, request, keep));
  });
  res.once('close', cancel);
}

/**
 * Streams a normal answer without its finish frames and ends the stream cleanly, as a proxy that
 * closes a long stream does; non-streaming requests get a 500.
 */
function sendCutStream(input: AnswerInput): void {
  const { res, request } = input;
  if (!request.stream) {
    sendError(res, serverErrorResponse(request.wire, 500));
    return;
  }
  const frames = streamFrames(plan('ok', input), input);
  const finish = WIRE_RENDERERS[request.wire].finishFrames(request);
  sendSse(res, frames.slice(0, Math.max(0, frames.length - finish)));
}

/**
 * Streams the first frames of a normal answer, then nothing until `ms` have passed, then drops the
 * connection: a stream gone silent; non-streaming requests get a 500.
 */
function sendSilentStream(spec: Extract<FaultSpec, { fault: 'silent_stream' }>, input: AnswerInput): void {
  const { res, request } = input;
  if (!request.stream) {
    sendError(res, serverErrorResponse(request.wire, 500));
    return;
  }
  const frames = streamFrames(plan('ok', input), input);
  res.writeHead(200, SSE_HEADERS);
  for (const frame of frames.slice(0, Math.min(2, frames.length - 1))) res.write(frame);
  const cancel = input.schedule(spec.ms ?? DEFAULT_STALL_MS, () => res.socket?.destroy());
  res.once('close', cancel);
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
      return rateLimitResponse(wire, spec);
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
  } else if (spec.fault === 'silent_stream') {
    sendSilentStream(spec, input);
  } else if (spec.fault === 'cut_stream') {
    sendCutStream(input);
  } else {
    sendCompletion(plan(spec.fault, input), input);
  }
}
