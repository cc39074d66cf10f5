import { isBatonError } from './errors.js';
import { renderTemplate } from './plan/template.js';
import type { RunState, StepResult, StepState } from './run-state.js';

/** A run as its templates read it outside an attempt: its id, inputs and the results of its steps. */
export type TemplateRun = Pick<RunState, 'id' | 'inputs'> & { steps: readonly StepState[] };

/**
 * A text of a step (its `notBefore`, its flow key) rendered over the run's inputs and the results
 * of its settled steps, `item` for a fan-out item; text without `{{` is returned as it is. A
 * reference it cannot resolve is the problem returned, never a throw.
 */
export function renderRunText(
  run: TemplateRun,
  text: string,
  item?: { name: string; value: unknown },
): { text: string } | { problem: string } {
  if (!text.includes('{{')) return { text };
  try {
    return {
      text: renderTemplate(text, {
        run: { id: run.id, workspace: '' },
        inputs: { ...(run.inputs ?? {}) },
        steps: resultsOf(run.steps),
        ...(item === undefined ? {} : { item }),
      }),
    };
  } catch (error) {
    if (!isBatonError(error)) throw error;
    return { problem: error.message };
  }
}

type Results = Record<string, { summary: string; outputs: string[]; value?: unknown }>;

function resultsOf(steps: readonly StepState[]): Results {
  const results: Results = {};
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
