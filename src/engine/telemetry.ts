import { createRequire } from 'node:module';
import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import type { BatonEvent } from '../core/events.js';
import type { StepOutcome } from '../core/failure.js';
import type { ClaimedStep, RunDetail } from '../store/store.js';

/**
 * OpenTelemetry spans through `@opentelemetry/api`: a no-op unless the program registers an SDK.
 * `baton.attempt` spans each attempt while it runs; `baton.recovery.*` child spans record what the
 * model harness did; `baton.step` spans a step from its first attempt to its success; `baton.run`
 * spans a run that a process drove to its end.
 */
type OtelApi = typeof import('@opentelemetry/api');

/** Where `@opentelemetry/api` 1.x keeps what a program registered (a tracer provider under `trace`). */
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');
let api: OtelApi | undefined;

/**
 * The API, once a tracer provider is registered with it. Until then every span would be a no-op,
 * so the API is not even loaded: that saves about 20 ms of a process's first attempt, and each
 * attempt the span calls. A provider registered later is picked up by the next span.
 */
function otel(): OtelApi | null {
  const registered = (globalThis as Record<symbol, { trace?: unknown } | undefined>)[OTEL_GLOBAL];
  if (registered?.trace === undefined) return null;
  api ??= createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
  return api;
}

const tracer = (): Tracer | null => otel()?.trace.getTracer('baton') ?? null;

/** An attempt's span; null when no tracer provider is registered. */
type AttemptSpan = Span | null;

/** SpanStatusCode.ERROR, without loading the API for its enum. */
const SPAN_ERROR = 2;

function claimAttributes(claim: ClaimedStep): Attributes {
  return {
    'baton.run_id': claim.runId,
    'baton.plan': claim.planName,
    'baton.step_id': claim.stepId,
    'baton.attempt': claim.attempt,
    'baton.step_kind': claim.step.kind,
    ...(claim.fallback ? { 'baton.fallback': true } : {}),
  };
}

export function startAttemptSpan(claim: ClaimedStep): AttemptSpan {
  const span = tracer()?.startSpan(`baton.attempt ${claim.stepId}`) ?? null;
  if (span === null) return null;
  // Without a registered SDK the span records nothing: build no attributes for it.
  if (span.isRecording()) span.setAttributes(claimAttributes(claim));
  return span;
}

export function endAttemptSpan(span: AttemptSpan, outcome: StepOutcome, durationMs: number): void {
  if (span === null) return;
  if (!span.isRecording()) {
    span.end();
    return;
  }
  span.setAttribute('baton.duration_ms', durationMs);
  span.setAttribute('baton.outcome', outcome.ok ? (outcome.degraded ? 'degraded' : 'succeeded') : 'failed');
  if (outcome.usage) {
    span.setAttribute('baton.input_tokens', outcome.usage.inputTokens);
    span.setAttribute('baton.output_tokens', outcome.usage.outputTokens);
    span.setAttribute('baton.cost_usd', outcome.usage.costUsd);
  }
  if (!outcome.ok) {
    span.setAttribute('baton.failure_class', outcome.failureClass);
    span.setStatus({ code: SPAN_ERROR, message: outcome.message.slice(0, 300) });
  }
  span.end();
}

/** A child span of the attempt for each recovery action of the model harness (already redacted). */
export function recordRecoverySpans(parent: AttemptSpan, events: readonly BatonEvent[]): void {
  const otelApi = otel();
  const baton = tracer();
  if (parent === null || otelApi === null || baton === null || !parent.isRecording()) return;
  const parentContext = otelApi.trace.setSpan(otelApi.context.active(), parent);
  for (const event of events) {
    if (!event.type.startsWith('recovery.')) continue;
    const attributes: Attributes = {};
    for (const [key, value] of Object.entries(event)) {
      if (key !== 'type' && (typeof value === 'string' || typeof value === 'number')) {
        attributes[`baton.${key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`] = value;
      }
    }
    const span = baton.startSpan(`baton.${event.type}`, { attributes }, parentContext);
    if ('failureClass' in event && event.failureClass)
      span.setAttribute('baton.failure_class', event.failureClass);
    span.end();
  }
}

/** A step done (succeeded or degraded): its span from its first attempt to now. */
export function recordStepSpan(
  claim: ClaimedStep,
  startedAt: number,
  endedAt: number,
  degraded: boolean,
): void {
  const span = tracer()?.startSpan(`baton.step ${claim.stepId}`, { startTime: startedAt });
  if (span === undefined) return;
  if (span.isRecording()) {
    span.setAttributes({
      ...claimAttributes(claim),
      'baton.attempts': claim.attempt,
      'baton.outcome': degraded ? 'degraded' : 'succeeded',
    });
  }
  span.end(endedAt);
}

export function recordRunSpan(run: RunDetail): void {
  const span = tracer()?.startSpan(`baton.run ${run.planName}`, {
    attributes: {
      'baton.run_id': run.id,
      'baton.plan': run.planName,
      'baton.status': run.status,
      'baton.attempts': run.attemptsTotal,
      'baton.input_tokens': run.usage.inputTokens,
      'baton.output_tokens': run.usage.outputTokens,
      'baton.cost_usd': run.usage.costUsd,
    },
    startTime: run.createdAt,
  });
  if (span === undefined) return;
  if (run.status !== 'succeeded')
    span.setStatus({ code: SPAN_ERROR, message: run.blockedReason ?? run.status });
  span.end(run.finishedAt ?? run.updatedAt);
}
