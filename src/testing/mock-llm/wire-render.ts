import { anthropicStreamFrames, renderAnthropicMessage } from './anthropic-wire.js';
import type { CompletionPlan } from './completion-plan.js';
import { midstreamErrorPayload } from './error-bodies.js';
import { geminiMidstreamErrorChunk } from './gemini-error-bodies.js';
import { geminiStreamFrames, renderGeminiBody } from './gemini-wire.js';
import { sseFrame } from './http-io.js';
import { openaiStreamFrames, renderOpenaiCompletion, wantsUsage } from './openai-wire.js';
import { renderResponsesBody, responsesFailedFrame, responsesStreamFrames } from './responses-wire.js';
import type { MockRequest, ResponseContext, Wire } from './types.js';

/** How one wire renders a completion, and how it reports an error inside a started stream. */
interface WireRenderer {
  /** The non-streaming JSON body. */
  body(plan: CompletionPlan, ctx: ResponseContext, request: MockRequest): unknown;
  /** The streamed answer, frame by frame. */
  frames(plan: CompletionPlan, ctx: ResponseContext, request: MockRequest): string[];
  /** How many frames of a normal answer are sent before a midstream error. */
  keepBeforeError: number;
  /**
   * What reports the error: an SSE `data:` error (Chat), an `event: error` (Anthropic), a
   * `response.failed` event (Responses), a bare JSON google.rpc.Status chunk (Gemini).
   */
  errorFrame(ctx: ResponseContext, request: MockRequest, sequence: number): string;
  /**
   * How many frames at the end of a streamed answer make up its finish, which a cut stream leaves
   * out: Chat the finish chunk, the usage chunk (when asked for) and `[DONE]`; Anthropic
   * `message_delta` and `message_stop`; Responses `response.completed`; Gemini the chunk with
   * `finishReason`.
   */
  finishFrames(request: MockRequest): number;
}

export const WIRE_RENDERERS: Readonly<Record<Wire, WireRenderer>> = {
  openai: {
    body: (plan, ctx) => renderOpenaiCompletion(plan, ctx),
    frames: (plan, ctx, request) => openaiStreamFrames(plan, ctx, wantsUsage(request)),
    keepBeforeError: 2,
    errorFrame: () => sseFrame(midstreamErrorPayload('openai')),
    finishFrames: (request) => (wantsUsage(request) ? 3 : 2),
  },
  anthropic: {
    body: (plan, ctx) => renderAnthropicMessage(plan, ctx),
    frames: (plan, ctx) => anthropicStreamFrames(plan, ctx),
    keepBeforeError: 3,
    errorFrame: () => sseFrame(midstreamErrorPayload('anthropic'), 'error'),
    finishFrames: () => 2,
  },
  responses: {
    body: renderResponsesBody,
    frames: responsesStreamFrames,
    keepBeforeError: 5,
    errorFrame: responsesFailedFrame,
    finishFrames: () => 1,
  },
  gemini: {
    body: (plan, ctx) => renderGeminiBody(plan, ctx),
    frames: (plan, ctx) => geminiStreamFrames(plan, ctx),
    keepBeforeError: 1,
    errorFrame: () => geminiMidstreamErrorChunk(),
    finishFrames: () => 1,
  },
};
