import type { RandomSource } from '../../core/backoff.js';
import { BatonError } from '../../core/errors.js';
import { FAULT_NAMES, type FaultName, isFaultName } from './faults.js';

/** Probabilities per request for each fault; whatever is left over is `ok`. */
export type FaultMix = Partial<Record<FaultName, number>>;

/**
 * mulberry32 (Tommy Ettinger's 32-bit generator): tiny, fast and good enough to draw faults.
 * The same seed always gives the same sequence of numbers in [0, 1).
 */
export function createSeededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Throws on a mix with an unknown fault name, a probability outside [0, 1], or a sum above 1. */
export function validateFaultMix(mix: FaultMix): void {
  let sum = 0;
  for (const [name, probability] of Object.entries(mix)) {
    if (!isFaultName(name)) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `mock-llm: mix.${name}: unknown fault (known: ${FAULT_NAMES.join(', ')})`,
      );
    }
    if (typeof probability !== 'number' || !(probability >= 0 && probability <= 1)) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `mock-llm: mix.${name}: expected a probability in [0, 1], got ${String(probability)}`,
      );
    }
    sum += probability;
  }
  if (sum > 1 + 1e-9) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `mock-llm: mix: probabilities add up to ${sum}, above 1; lower some of them`,
    );
  }
}

/**
 * Draws one fault: a single number from `random`, compared with the cumulative probabilities in
 * the fixed order of FAULT_NAMES (so the key order of `mix` does not matter).
 */
export function drawFault(random: RandomSource, mix: FaultMix): FaultName {
  const u = random();
  let cumulative = 0;
  for (const name of FAULT_NAMES) {
    const probability = mix[name];
    if (probability === undefined || probability <= 0) continue;
    cumulative += probability;
    if (u < cumulative) return name;
  }
  return 'ok';
}
