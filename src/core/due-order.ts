import { isDueStep, type RunState } from './run-state.js';

/** A due step as a claim looks at it: where it is and when it became due. */
export interface DueStep {
  runId: string;
  stepId: string;
  dueAt: number;
  /** Its index in the run's plan (`steps.position` in both stores). */
  position: number;
}

/**
 * The one order in which due steps are offered to claims, on both stores: earliest due first, then
 * by run id, then in plan order, so the steps of one plan declared side by side start in the order
 * they are written (never by step id, which would make `zeta` wait for `alpha`). The stores' SQL
 * orders by the same columns: `(due_at, run_id, position)`.
 */
export function compareDueSteps(a: DueStep, b: DueStep): number {
  if (a.dueAt !== b.dueAt) return a.dueAt - b.dueAt;
  if (a.runId !== b.runId) return a.runId < b.runId ? -1 : 1;
  return a.position - b.position;
}

/** The due steps of a run held in memory, pushed onto `into` in plan order (sort them with compareDueSteps). */
export function pushDueSteps(run: RunState, now: number, into: DueStep[]): DueStep[] {
  const { steps } = run;
  for (let position = 0; position < steps.length; position++) {
    const step = steps[position]!;
    if (isDueStep(step, now)) into.push({ runId: run.id, stepId: step.stepId, dueAt: step.dueAt!, position });
  }
  return into;
}
