import { BatonError, runNotFound } from '../core/errors.js';
import type { RunDetail, Store } from '../store/store.js';

/** The run a URL names, or the one message for an unknown run (404). */
export async function requireRun(store: Store, runId: string): Promise<RunDetail> {
  const run = await store.getRun(runId);
  if (!run) throw runNotFound(runId);
  return run;
}

/** Refuses a step the run does not have, naming the ones it has (404). */
export function requireStep(run: RunDetail, stepId: string): void {
  if (!run.steps.some((s) => s.stepId === stepId)) {
    const known = run.steps.map((s) => s.stepId).join(', ');
    throw new BatonError('STEP_NOT_FOUND', `run ${run.id} has no step "${stepId}" (steps: ${known})`);
  }
}
