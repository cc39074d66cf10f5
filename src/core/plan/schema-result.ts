import { z } from 'zod';
import { jsonValueSchema } from './schema-fields.js';
import { describeValue } from './zod-issues.js';

/**
 * `resultFile` and `resultSchema` of an agent step in the plan file: the JSON file the agent
 * leaves as the step's structured result, and the JSON Schema it must match. Which steps may have
 * them, and whether the path stays in the workspace, is checked in result-fields.ts.
 */

export const resultFileSchema = z
  .string({
    error: (issue) => `expected a path (a string), e.g. result.json, got ${describeValue(issue.input)}`,
  })
  .min(1, { error: 'is empty: name a file in the run workspace, e.g. result.json' })
  .describe(
    "A JSON file the agent writes, relative to the run workspace: after the agent exits, its content becomes the step's result value ({{steps.<id>.result.<path>}}). A missing file, bad JSON or a resultSchema violation fails the attempt (agent_failed) and the retry's prompt says why. At most 1 MiB.",
  );

export const resultSchemaSchema = jsonValueSchema
  .refine((value) => typeof value === 'object' && value !== null && !Array.isArray(value), {
    error: (issue) =>
      `expected a JSON Schema (an object), e.g. { type: object, required: [passed] }, got ${describeValue(issue.input)}`,
  })
  .meta({ type: 'object' })
  .describe(
    'A JSON Schema (draft-07) the result file must match; each violation is reported with its JSON path. Needs resultFile.',
  );
