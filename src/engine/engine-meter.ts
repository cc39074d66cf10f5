import type { StepOutcome, StepUsage } from '../core/failure.js';
import { agentProgramName } from '../core/flow.js';
import type { PlanStep } from '../core/plan/types.js';

/**
 * Upper bounds (seconds) of the claim-cycle latency histogram: a cycle is one store transaction
 * (commit finished attempts, reclaim expired leases, claim due steps), from about a millisecond on
 * SQLite to seconds on a loaded PostgreSQL.
 */
export const CYCLE_SECONDS_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Tokens and cost reported by the attempts of one model (`EngineMeter.usageByModel`). */
export interface ModelUsage extends StepUsage {
  /** Attempts that reported usage. */
  attempts: number;
}

/**
 * What an engine measures of itself for `/metrics` (runtime/metrics.ts): plain tallies, no metrics
 * library, one call per store cycle and one per attempt that reported usage. The figures every
 * worker shares (runs, steps, attempts, reclaims, hook calls) come from the store instead.
 */
export class EngineMeter {
  /** Cycles per bucket of CYCLE_SECONDS_BUCKETS (not cumulative); the last slot: above every bound. */
  readonly cycleBuckets = new Array<number>(CYCLE_SECONDS_BUCKETS.length + 1).fill(0);
  cycles = 0;
  cycleSeconds = 0;
  /** Per model label (modelLabel). */
  readonly usageByModel = new Map<string, ModelUsage>();

  /** A store cycle took `ms` milliseconds. */
  cycleEnded(ms: number): void {
    const seconds = ms / 1000;
    let bucket = 0;
    while (bucket < CYCLE_SECONDS_BUCKETS.length && seconds > CYCLE_SECONDS_BUCKETS[bucket]!) bucket++;
    this.cycleBuckets[bucket]!++;
    this.cycles++;
    this.cycleSeconds += seconds;
  }

  /** An attempt of `step` ended; its usage (if it reported any) is added to its model's. */
  attemptEnded(step: PlanStep, outcome: StepOutcome): void {
    const usage = outcome.usage;
    if (usage === undefined) return;
    const label = modelLabel(step);
    let total = this.usageByModel.get(label);
    if (total === undefined) {
      total = { attempts: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
      this.usageByModel.set(label, total);
    }
    total.attempts++;
    total.inputTokens += usage.inputTokens;
    total.outputTokens += usage.outputTokens;
    total.costUsd += usage.costUsd;
  }
}

/**
 * The `model` label of an attempt's usage: a model step's `<provider>/<model>`; an agent step's CLI
 * (core/flow.ts `agentProgramName`: `claude`, `codex`); `fn` for a function. Bounded by the plans.
 */
export function modelLabel(step: PlanStep): string {
  if (step.kind === 'model' && step.model) return `${step.model.provider}/${step.model.model}`;
  if (step.kind === 'agent') return agentProgramName(step);
  return step.kind;
}
