import type { ModelStepSpec } from '../core/plan/types.js';
import type { ModelExecutor } from './model-executor.js';
import type { AttemptResult, ExecutionContext } from './step-executor.js';

/** Makes the grader's one model call (the model executor's `call`), logging at `logPath`. */
export type Grader = (
  context: ExecutionContext,
  spec: ModelStepSpec,
  prompt: string,
  logPath: string,
) => Promise<AttemptResult>;

/** The grader that calls the model executor `load` gives (loaded on the first rubric graded). */
export function graderOf(load: () => Promise<Pick<ModelExecutor, 'call'>>): Grader {
  return async (context, spec, prompt, logPath) => (await load()).call(context, spec, { prompt }, logPath);
}
