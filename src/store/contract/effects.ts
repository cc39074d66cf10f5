// The effects of the Store contract: exactly-once side effects of a step (`ctx.effect`), keyed by
// (run, step, key). Contract suite: test/store-contract.ts ("effects").

export interface EffectStore {
  /**
   * Returns the effect recorded under `key`, or records an intent for it and returns null: the
   * first half of exactly-once effects (write it before the effect, `completeEffect` after).
   */
  beginEffect(key: EffectKey, now: number): Promise<EffectRecord | null>;
  completeEffect(key: EffectKey, result: unknown, now: number): Promise<void>;
  /** Forgets an intent whose effect is known not to have happened. */
  clearEffect(key: EffectKey): Promise<void>;
}

export interface EffectKey {
  runId: string;
  stepId: string;
  key: string;
}

/** An effect as recorded: only the intent (outcome unknown), or done with its result. */
export type EffectRecord = { state: 'intent' } | { state: 'done'; result: unknown };
