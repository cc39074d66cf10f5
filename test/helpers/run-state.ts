import type { Plan } from '../../src/core/plan/types.js';
import type { RunState } from '../../src/core/run-state.js';
import { initialStepStates } from '../../src/core/transitions.js';

/** A new running run of `plan`, as the core sees it, for tests that drive transitions by hand. */
export function runStateOf(
  plan: Plan,
  options: { id?: string; now?: number; inputs?: Record<string, string> } = {},
): RunState {
  const now = options.now ?? 0;
  const id = options.id ?? 'r1';
  return {
    id,
    status: 'running',
    plan,
    attemptsTotal: 0,
    blockedReason: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
    steps: initialStepStates(plan, now, new Set(), null, {
      id,
      ...(options.inputs === undefined ? {} : { inputs: options.inputs }),
    }),
    ...(options.inputs === undefined ? {} : { inputs: options.inputs }),
  };
}
