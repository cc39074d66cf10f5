import { z } from 'zod';
import { argvElementSchema, strictObject, timeoutSchema } from './schema-fields.js';
import { modelTargetShape } from './schema-model.js';
import { describeValue } from './zod-issues.js';

/**
 * `verify:` of an agent step in the plan file: what an attempt must pass before it counts as done.
 * Which steps may have it, and how its parts fit together, is checked in normalize-verify.ts.
 */
export const verifySchema = strictObject(
  {
    command: z
      .array(argvElementSchema, {
        error: (issue) =>
          `expected the command as a list of arguments, e.g. [npm, test], got ${describeValue(issue.input)}`,
      })
      .min(1, { error: 'the command needs at least the program, e.g. [npm, test]' })
      .optional()
      .describe(
        "A trusted program run in the workspace after the agent exits 0 and its outputs pass (never a shell; confined like the agent when the step is): a non-zero exit fails the attempt (agent_failed) and the last 4 KB of its output go into the next attempt's prompt. E.g. [npm, test].",
      ),
    timeoutMs: timeoutSchema('Timeout of the command. Default 10m.').optional(),
    rubric: z
      .string({
        error: (issue) => `expected a path (a string), e.g. rubric.md, got ${describeValue(issue.input)}`,
      })
      .min(1, { error: 'is empty: name a file in the run workspace, e.g. rubric.md' })
      .optional()
      .describe(
        "A file in the run workspace holding the criteria (one per line; blank lines and # headings ignored): a separate model call grades the step's outputs against each one, and failed criteria go into the next attempt's prompt. Needs model.",
      ),
    model: strictObject(
      {
        ...modelTargetShape,
        maxOutputTokens: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe("Output budget of the grader's answer. Default 1024."),
        requestTimeoutMs: timeoutSchema('Timeout of one request to the grader. Default 2m.').optional(),
      },
      'a grader model: { provider, model, baseUrl?, apiKeyEnv?, ... }',
    )
      .optional()
      .describe(
        "The model that grades the rubric, called through the recovery harness; its tokens and cost count in the step's and the run's budgets.",
      ),
    maxIterations: z
      .number({ error: (issue) => `expected a whole number ≥ 1, got ${describeValue(issue.input)}` })
      .int({ error: (issue) => `expected a whole number ≥ 1, got ${describeValue(issue.input)}` })
      .min(1, { error: (issue) => `expected a whole number ≥ 1, got ${describeValue(issue.input)}` })
      .max(100, { error: 'at most 100 iterations' })
      .optional()
      .describe(
        "How many times the check may fail before the step is blocked with its last failures. Default: the step's retry.maxAttempts (which also bounds it).",
      ),
  },
  'a verification: { command?, timeoutMs?, rubric?, model?, maxIterations? }',
).describe(
  'Agent steps: a check each attempt must pass to count as done, after the agent exits 0 and its requiredOutputs and resultSchema pass: a command, a rubric graded by a model, or both (the command first). The result carries verification: { passed, iterations, failures }.',
);
