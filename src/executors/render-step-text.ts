import { isBatonError } from '../core/errors.js';
import { renderTemplate } from '../core/plan/template.js';
import type { ExecutionContext } from './step-executor.js';

/**
 * Renders a step's `{{...}}` references (instruction, model prompt or system) from the run, the
 * results of earlier steps and, for a fan-out item, its element, in one pass: what a reference gives
 * is never expanded again. An unresolvable reference is the step's `invalid` failure, not a throw.
 */
export function renderStepText(
  text: string,
  context: Pick<ExecutionContext, 'claim' | 'results'>,
): { ok: true; text: string } | { ok: false; message: string } {
  const { claim } = context;
  const cleanup = claim.step?.cleanup;
  const item = claim.step?.forEachItem ?? cleanup?.item;
  try {
    return {
      ok: true,
      text: renderTemplate(text, {
        run: {
          id: claim.runId,
          workspace: claim.workspace,
          ...(cleanup === undefined ? {} : { status: cleanup.runStatus }),
        },
        inputs: claim.inputs,
        ...(item?.as === undefined ? {} : { item: { name: item.as, value: item.value } }),
        ...(cleanup !== undefined && cleanup.compensates === undefined ? { missingStepsEmpty: true } : {}),
        steps: Object.fromEntries(
          Object.entries(context.results).map(([id, result]) => [
            id,
            {
              summary: result.summary,
              outputs: result.outputs.map((o) => o.path),
              ...(result.value === undefined ? {} : { value: result.value }),
            },
          ]),
        ),
      }),
    };
  } catch (error) {
    if (!isBatonError(error)) throw error;
    return { ok: false, message: error.message };
  }
}
