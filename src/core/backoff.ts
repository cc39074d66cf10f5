import type { RetryPolicy } from './plan/types.js';

/** A source of uniform random numbers in [0, 1): injectable so backoff is testable without sleeping. */
export type RandomSource = () => number;

/**
 * The exponential ceiling for the wait after failed try number `tries` (1-based):
 * `min(maxDelayMs, initialDelayMs * factor^(tries-1))`.
 */
export function backoffCeilingMs(policy: RetryPolicy, tries: number): number {
  const exponent = Math.max(0, tries - 1);
  const raw = policy.initialDelayMs * policy.factor ** exponent;
  return Number.isFinite(raw) ? Math.min(policy.maxDelayMs, raw) : policy.maxDelayMs;
}

/**
 * Full jitter (AWS architecture blog, "Exponential Backoff And Jitter"): a uniform wait in
 * [0, ceiling]. Spreads retries of many runs apart instead of waking them all together.
 */
export function fullJitterDelayMs(policy: RetryPolicy, tries: number, random: RandomSource): number {
  const ceiling = backoffCeilingMs(policy, tries);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(r * ceiling);
}
