import type { BatonEvent } from '../../core/events.js';
import type { RunState } from '../../core/run-state.js';
import { initialStepStates } from '../../core/transitions.js';
import type { NewRun } from '../store.js';

/** The result of a step that was done before the run was imported (`baton import`). */
const IMPORTED_RESULT = JSON.stringify({ summary: 'done before the run was imported', outputs: [] });

/**
 * A new run as both dialects store it: its state (steps due after their delay; an imported run's
 * done steps and a fork's kept ones settled) and its run.created event.
 */
export function newRunState(spec: NewRun): { state: RunState; event: BatonEvent } {
  const kept = new Map((spec.keptSteps ?? []).map((step) => [step.stepId, step]));
  const done = new Set([...(spec.completedSteps ?? []), ...kept.keys()]);
  const initial = initialStepStates(spec.plan, spec.now, done, IMPORTED_RESULT, {
    id: spec.id,
    inputs: spec.inputs,
  });
  // A fork's kept steps start as the old run left them: succeeded, skipped or degraded, with its result.
  const steps =
    kept.size === 0
      ? initial
      : initial.map((step) => {
          const from = kept.get(step.stepId);
          return from ? { ...step, status: from.status, resultJson: from.resultJson } : step;
        });
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
      ...(spec.plan.forkedFrom ? { forkedFrom: spec.plan.forkedFrom } : {}),
    },
  };
}
