import { renderStepText } from './render-step-text.js';
import type { AttemptResult, ExecutionContext, StepExecutor } from './step-executor.js';

/**
 * Stands in for a step with a side effect in a shadow run: nothing is executed; the step's fully
 * rendered inputs are recorded as a `step.would_execute` event and its `shadowResult` (or null) is
 * passed on as its result.
 */
export const shadowExecutor: StepExecutor = {
  async execute(context: ExecutionContext): Promise<AttemptResult> {
    const { claim } = context;
    const step = claim.step;
    const render = (text: string | undefined) => {
      if (text === undefined) return undefined;
      const rendered = renderStepText(text, context);
      return rendered.ok ? rendered.text : `(cannot render: ${rendered.message})`;
    };
    let inputs: Record<string, unknown>;
    if (step.kind === 'agent') {
      inputs = { command: step.agent?.command ?? [], instruction: render(step.instruction) };
    } else if (step.kind === 'model' && step.model) {
      const { provider, model, baseUrl, tools, maxOutputTokens } = step.model;
      inputs = {
        provider,
        model,
        ...(baseUrl === undefined ? {} : { baseUrl }),
        system: render(step.model.system),
        prompt: render(step.model.prompt),
        tools,
        maxOutputTokens,
      };
    } else {
      inputs = { fn: step.fn, args: step.args ?? null, results: context.results };
    }
    const result = step.shadowResult ?? null;
    await context.recordEvents([
      {
        type: 'step.would_execute',
        stepId: claim.stepId,
        attempt: claim.attempt,
        executor: step.kind,
        inputs,
        result,
      },
    ]);
    return {
      outcome: {
        ok: true,
        summary: typeof result === 'string' ? result : JSON.stringify(result),
        outputs: [],
        ...(typeof result === 'string' ? {} : { value: result }),
      },
      logPath: null,
    };
  },
};
