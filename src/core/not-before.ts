import { isBatonError } from './errors.js';
import { DATE_TIME_EXAMPLE, instantOf } from './plan/date-time.js';
import { renderTemplate } from './plan/template.js';
import type { PlanStep } from './plan/types.js';
import type { RunState, StepResult, StepState } from './run-state.js';

/** What a step's `notBefore` names: an instant, or why it names none (a template that rendered badly). */
export type NotBefore = { at: number } | { invalid: string };

/** The run as `notBefore` reads it: its id, inputs and the results of its steps. */
type NotBeforeRun = Pick<RunState, 'id' | 'inputs'> & { steps: readonly StepState[] };

/**
 * The instant a step's `notBefore` names, rendered over the run's inputs and the results of its
 * settled steps when the step becomes ready; null when it has none.
 */
export function notBeforeOf(run: NotBeforeRun, step: PlanStep): NotBefore | null {
  const text = step.notBefore;
  if (text === undefined) return null;
  let rendered = text;
  if (text.includes('{{')) {
    try {
      rendered = renderTemplate(text, {
        run: { id: run.id, workspace: '' },
        inputs: run.inputs ?? {},
        steps: resultsOf(run.steps),
      });
    } catch (error) {
      if (!isBatonError(error)) throw error;
      return { invalid: `notBefore ${text}: ${error.message}` };
    }
  }
  const at = instantOf(rendered);
  if (at !== undefined) return { at };
  const shown =
    rendered === text ? JSON.stringify(text) : `${text} gave ${JSON.stringify(rendered.slice(0, 100))}`;
  return {
    invalid: `notBefore ${shown}: not an ISO 8601 date-time with an offset, e.g. ${DATE_TIME_EXAMPLE}`,
  };
}

/**
 * When a step that becomes ready at `now` is first due: after its `delayBeforeMs`, and not before
 * its `notBefore` (the later of the two). A `notBefore` that names no instant does not delay it:
 * claiming it blocks it as invalid (core/transitions.ts).
 */
export function firstDueAt(run: NotBeforeRun, step: PlanStep, now: number): number {
  const delayed = now + step.delayBeforeMs;
  if (step.notBefore === undefined) return delayed;
  const notBefore = notBeforeOf(run, step);
  return notBefore !== null && 'at' in notBefore ? Math.max(delayed, notBefore.at) : delayed;
}

function resultsOf(
  steps: readonly StepState[],
): Record<string, { summary: string; outputs: string[]; value?: unknown }> {
  const results: Record<string, { summary: string; outputs: string[]; value?: unknown }> = {};
  for (const state of steps) {
    if (state.resultJson === null || state.status === 'skipped') continue;
    const result = JSON.parse(state.resultJson) as StepResult;
    results[state.stepId] = {
      summary: result.summary,
      outputs: result.outputs.map((output) => output.path),
      ...(result.value === undefined ? {} : { value: result.value }),
    };
  }
  return results;
}
