import { stepOf } from '../../core/run-state.js';
import { isDueStep } from '../due-steps.js';
import type { LoadedRun } from '../loaded-run.js';
import type { CycleRequest } from '../store.js';
import type { DueRow } from './store-statements.js';

/**
 * Steps to try to claim, earliest due first: those the database holds as due, and those that
 * became due in this very cycle (a completed step's successors), which are only in memory yet.
 */
export function dueCandidates(
  stored: DueRow[],
  changedRuns: Iterable<{ entry: LoadedRun; changed: ReadonlySet<string> }>,
  request: Pick<CycleRequest, 'now' | 'runId'>,
): DueRow[] {
  const byKey = new Map<string, DueRow>();
  for (const row of stored) byKey.set(`${row.run_id}\u0000${row.step_id}`, row);
  for (const { entry, changed } of changedRuns) {
    if (request.runId !== undefined && entry.state.id !== request.runId) continue;
    for (const stepId of changed) {
      const step = stepOf(entry.state, stepId)!;
      if (isDueStep(step, request.now)) {
        byKey.set(`${entry.state.id}\u0000${step.stepId}`, {
          run_id: entry.state.id,
          step_id: step.stepId,
          due_at: step.dueAt!,
        });
      }
    }
  }
  return [...byKey.values()].sort((a, b) => a.due_at - b.due_at);
}

/** Every due step of a run held in memory, earliest first. */
export function dueStepsOf(entry: LoadedRun, now: number): DueRow[] {
  const due: DueRow[] = [];
  for (const step of entry.state.steps) {
    if (isDueStep(step, now)) due.push({ run_id: entry.state.id, step_id: step.stepId, due_at: step.dueAt! });
  }
  return due.sort((a, b) => a.due_at - b.due_at);
}
