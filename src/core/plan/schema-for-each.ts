import { z } from 'zod';
import { idSchema, strictObject } from './schema-fields.js';
import { MAX_FOR_EACH_ITEMS } from './types.js';
import { describeValue } from './zod-issues.js';

/**
 * `forEach` of a step in the plan file: the step runs once per element of a list its dependencies
 * produced (see core/for-each.ts). What `items` may name is checked in check-for-each.ts.
 */

const countProblem = (example: string) => (issue: { input?: unknown }) =>
  `expected a whole number >= 1, e.g. ${example}, got ${describeValue(issue.input)}`;

const toleratedProblem = (issue: { input?: unknown }) =>
  `expected a number of items >= 0 or a percentage of them, e.g. 5 or "10%", got ${describeValue(issue.input)}`;

export const forEachSchema = strictObject(
  {
    items: z
      .string({
        error: (issue) =>
          `expected a CEL expression giving a list, e.g. "steps.research.result.pages", got ${describeValue(issue.input)}`,
      })
      .min(1, { error: 'expected a CEL expression giving a list, e.g. "steps.research.result.pages"' })
      .describe(
        'A CEL expression over inputs.<name> and steps.<id>.result of the steps it depends on that gives a list, e.g. steps.research.result.pages: one item step per element.',
      ),
    as: idSchema('item name')
      .optional()
      .describe(
        'The name of the item in templates: {{<as>}} (the element as text, JSON for lists and maps) and {{<as>.<field>}} in the instruction and requiredOutputs. Default item.',
      ),
    maxItems: z
      .number({
        error: (issue) =>
          issue.input === undefined
            ? `is required: the most items this step may expand into, at most ${MAX_FOR_EACH_ITEMS}, e.g. maxItems: 100`
            : countProblem('100')(issue),
      })
      .int({ error: countProblem('100') })
      .min(1, { error: countProblem('100') })
      .max(MAX_FOR_EACH_ITEMS, {
        error: (issue) =>
          `${describeValue(issue.input)} is above ${MAX_FOR_EACH_ITEMS}, the most items one step may expand into: lower it, or split the list over several steps`,
      })
      .describe(
        `Required: the most items the list may have (at most ${MAX_FOR_EACH_ITEMS}); a longer list blocks the step (invalid) with its count.`,
      ),
    concurrency: z
      .number({ error: countProblem('8') })
      .int({ error: countProblem('8') })
      .min(1, { error: countProblem('8') })
      .optional()
      .describe(
        "The most items running at once (within the run's limits.concurrency). Default: no cap of its own.",
      ),
    toleratedFailures: z
      .union(
        [
          z.number().int({ error: toleratedProblem }).min(0, { error: toleratedProblem }),
          z.string().regex(/^(100|[1-9]?[0-9])(\.[0-9]+)?%$/, { error: toleratedProblem }),
        ],
        {
          error: toleratedProblem,
        },
      )
      .optional()
      .describe(
        'How many items may end blocked (a number, or a percentage of the items, e.g. "10%") with the step still succeeding: their errors are kept in its result. Default 0.',
      ),
  },
  'a fan-out: { items, maxItems, as?, concurrency?, toleratedFailures? }',
).describe(
  'Run the step once per element of a list (an item step <id>[i] each, with its own attempts, retries, timeout and log); its result is the list of the item results, in item order.',
);
