import { compareDueSteps, type DueStep, dueStepOf, pushDueSteps } from '../../core/due-order.js';
import { isDueStep, planIndex } from '../../core/run-state.js';
import type { LoadedRun } from '../loaded-run.js';
import type { CycleRequest } from '../store.js';

/**
 * Steps to try to claim, in the core's due order (compareDueSteps): those the database holds as
 * due, and those that became due in this very cycle (a completed step's successors), which are only
 * in memory yet.
 */
export function dueCandidates(
  stored: DueStep[],
  changedRuns: Iterable<{ entry: LoadedRun; changed: ReadonlySet<string> }>,
  request: Pick<CycleRequest, 'now' | 'runId'>,
): DueStep[] {
  const byKey = new Map<string, DueStep>();
  for (const row of stored) byKey.set(`${row.runId}\u0000${row.stepId}`, row);
  for (const { entry, changed } of changedRuns) {
    const run = entry.state;
    if (request.runId !== undefined && run.id !== request.runId) continue;
    const { position } = planIndex(run.plan);
    for (const stepId of changed) {
      const at = position.get(stepId)!;
      const step = run.steps[at]!;
      if (isDueStep(step, request.now)) {
        byKey.set(`${run.id}\u0000${stepId}`, dueStepOf(run, at));
      }
    }
  }
  return [...byKey.values()].sort(compareDueSteps);
}

/** Every due step of a run held in memory, in the core's due order. */
export function dueStepsOf(entry: LoadedRun, now: number): DueStep[] {
  return pushDueSteps(entry.state, now, []).sort(compareDueSteps);
}
