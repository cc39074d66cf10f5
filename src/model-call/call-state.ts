import type { RandomSource } from '../core/backoff.js';
import type { BatonEvent, RecoveryDetail, RecoveryEventType } from '../core/events.js';
import { recordableMessage } from '../core/redact.js';
import type { HarnessClock } from './clock.js';
import type { RecoveryBudget } from './recovery-budget.js';
import type { ModelCapabilities, ModelProvider, ModelUsage } from './types.js';

/** A provider and model to send to, with what the model can take. */
export interface ModelTarget {
  provider: ModelProvider;
  model: string;
  capabilities: ModelCapabilities;
}

/** Every event the harness emits: recovery actions, call outcomes, tool failures. */
export type HarnessEvent = Extract<BatonEvent, { type: `recovery.${string}` | `tool.${string}` }>;

export interface BackoffSettings {
  /** First retry waits up to this (full jitter). Default 1,000 ms. */
  baseMs: number;
  /** No backoff wait exceeds this. Default 8,000 ms. */
  capMs: number;
  /** A Retry-After above this is a persistent failure (fallback or fail), not a wait. Default 60,000 ms. */
  retryAfterCapMs: number;
}

export const DEFAULT_BACKOFF: Readonly<BackoffSettings> = Object.freeze({
  baseMs: 1_000,
  capMs: 8_000,
  retryAfterCapMs: 60_000,
});

/** The mutable state of one `callModelWithRecovery`, shared by its send loop and its recovery loop. */
export class CallState {
  target: ModelTarget;
  onFallback = false;
  requests = 0;
  retriesOnTarget = 0;
  actions = 0;
  readonly usage: ModelUsage = { inputTokens: 0, outputTokens: 0 };

  constructor(
    primary: ModelTarget,
    readonly fallback: ModelTarget | undefined,
    readonly budget: RecoveryBudget,
    readonly backoff: BackoffSettings,
    readonly clock: HarnessClock,
    readonly random: RandomSource,
    readonly callId: string,
    readonly stepId: string | undefined,
    readonly secrets: readonly string[],
    private readonly sink: ((event: HarnessEvent) => void) | undefined,
  ) {
    this.target = primary;
  }

  /** Emits a recovery action; the message is redacted and cut to 300 characters. */
  record(
    type: RecoveryEventType,
    detail: Omit<RecoveryDetail, 'callId' | 'provider' | 'model' | 'attempt'>,
  ): void {
    if (type !== 'recovery.gave_up') this.actions++;
    if (!this.sink) return;
    const event: HarnessEvent = {
      type,
      ...(this.stepId === undefined ? {} : { stepId: this.stepId }),
      callId: this.callId,
      provider: this.target.provider.name,
      model: this.target.model,
      attempt: this.requests,
      ...detail,
      ...(detail.message === undefined ? {} : { message: recordableMessage(detail.message, this.secrets) }),
    };
    this.sink(event);
  }

  emit(event: HarnessEvent): void {
    this.sink?.(event);
  }
}
