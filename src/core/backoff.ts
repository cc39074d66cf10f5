import type { RetryPolicy } from './plan/types.js';

/** A source of uniform random numbers in [0, 1): injectable so backoff is testable without sleeping. */
export type RandomSource = () => number;

/**
 * What exponential backoff grows from: a step's retry policy, or the model-call harness's
 * settings (`model-call/send-request.ts`: factor 2, `baseMs` and `capMs`).
 */
type BackoffCurve = Pick<RetryPolicy, 'initialDelayMs' | 'factor' | 'maxDelayMs'>;

/**
 * The exponential ceiling for the wait after failed try number `tries` (1-based):
 * `min(maxDelayMs, initialDelayMs * factor^(tries-1))`.
 */
export function backoffCeilingMs(policy: BackoffCurve, tries: number): number {
  const exponent = Math.max(0, tries - 1);
  const raw = policy.initialDelayMs * policy.factor ** exponent;
  return Number.isFinite(raw) ? Math.min(policy.maxDelayMs, raw) : policy.maxDelayMs;
}

/**
 * Full jitter (AWS architecture blog, "Exponential Backoff And Jitter"): a uniform wait in
 * [0, ceiling]. Spreads retries of many runs apart instead of waking them all together. The one
 * place it is computed: step retries (`core/transitions.ts`) and model-call retries use it.
 */
export function fullJitterDelayMs(policy: BackoffCurve, tries: number, random: RandomSource): number {
  const ceiling = backoffCeilingMs(policy, tries);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(r * ceiling);
}
