import type { BatonEvent } from '../../core/events.js';
import type { RunState } from '../../core/run-state.js';
import { initialStepStates } from '../../core/transitions.js';
import type { NewRun } from '../store.js';

/** The result of a step that was done before the run was imported (`baton import`). */
const IMPORTED_RESULT = JSON.stringify({ summary: 'done before the run was imported', outputs: [] });

/** A new run as both dialects store it: its state (steps due after their delay) and its run.created event. */
export function newRunState(spec: NewRun): { state: RunState; event: BatonEvent } {
  const steps = initialStepStates(spec.plan, spec.now, new Set(spec.completedSteps ?? []), IMPORTED_RESULT);
  const status = spec.awaitingApproval ? 'awaiting_approval' : 'running';
  return {
    state: {
      id: spec.id,
      status,
      plan: spec.plan,
      attemptsTotal: 0,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      blockedReason: null,
      createdAt: spec.now,
      updatedAt: spec.now,
      finishedAt: null,
      steps,
      inputs: spec.inputs,
    },
    event: {
      type: 'run.created',
      planName: spec.plan.name,
      planHash: spec.planHash,
      steps: spec.plan.steps.length,
      status,
    },
  };
}
