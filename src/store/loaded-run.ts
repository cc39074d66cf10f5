import type { StepOutcome } from '../core/failure.js';
import type { RunState, StepResult } from '../core/run-state.js';

/** A run as every store loads it to apply a transition: its state and what its steps run with. */
export interface LoadedRun {
  state: RunState;
  planHash: string;
  inputs: Record<string, string>;
  workspace: string;
}

/** Steps of the run holding a lease now: per-run concurrency counts them. */
export function runningCount(run: RunState): number {
  let count = 0;
  for (const step of run.steps) if (step.status === 'running') count++;
  return count;
}

/** The stored result of a succeeded attempt (what templates and later steps read). */
export function resultOf(outcome: Extract<StepOutcome, { ok: true }>): StepResult {
  return {
    summary: outcome.summary,
    outputs: outcome.outputs,
    ...(outcome.value === undefined ? {} : { value: outcome.value }),
    ...(outcome.resultRef === undefined ? {} : { ref: outcome.resultRef }),
  };
}
