import { z } from 'zod';
import { controlCharacterProblem, firstControlCharacter } from '../control-chars.js';
import { DATE_TIME_EXAMPLE, instantOf } from './date-time.js';
import { DURATION_EXAMPLES, DURATION_PATTERN, isDuration, parseDurationMs } from './duration.js';
import { FLOW_KEY_PATTERN, RESERVED_NAMES, STEP_ID_PATTERN } from './types.js';
import { describeValue, unknownKeysMessage } from './zod-issues.js';

/** The field schemas the plan file format is built from: objects, names, durations, JSON values. */

/** Node's timers fire at once beyond this (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** A strict object whose unknown-key error lists, or guesses, the allowed keys. */
export function strictObject<T extends z.core.$ZodLooseShape>(shape: T, what: string) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') return unknownKeysMessage(issue.keys, known);
      if (issue.code === 'invalid_type') return `expected ${what}, got ${describeValue(issue.input)}`;
      return undefined;
    },
  });
}

export function nameSchema(what: string, pattern: RegExp, rule: string) {
  return z
    .string({ error: (issue) => `expected ${what} (a string), got ${describeValue(issue.input)}` })
    .regex(pattern, {
      error: (issue) => `${describeValue(issue.input)} is not a valid ${what}: use ${rule}`,
    });
}

export function flowKeySchema(description: string) {
  return nameSchema('flow key', FLOW_KEY_PATTERN, '1-100 letters, digits or "._:@/-", e.g. claude').describe(
    description,
  );
}

/** Step ids and input names become object keys elsewhere, so prototype names are refused. */
export function idSchema(what: string) {
  return nameSchema(what, STEP_ID_PATTERN, '1-64 letters, digits, "_" or "-"').refine(
    (name) => !RESERVED_NAMES.has(name),
    { error: (issue) => `${describeValue(issue.input)} is reserved: choose another ${what}` },
  );
}

const durationProblem = (issue: { input?: unknown }) =>
  `${describeValue(issue.input)} is not a duration: use whole milliseconds or a number with a unit (ms, s, m, h, d), e.g. ${DURATION_EXAMPLES}`;

export function durationSchema(description: string) {
  return z
    .union(
      [
        z.number().int({ error: durationProblem }).min(0, { error: durationProblem }),
        z.string().regex(DURATION_PATTERN, { error: durationProblem }),
      ],
      { error: durationProblem },
    )
    .describe(`${description} Milliseconds, or a string with a unit: ${DURATION_EXAMPLES}.`);
}

export const timeoutSchema = (description: string) =>
  durationSchema(`${description} At least 1 ms, at most 24.8 days.`).refine(
    (value) => {
      if (!isDuration(value)) return true; // already reported by the union
      const ms = parseDurationMs(value, 'timeoutMs');
      return ms >= 1 && ms <= MAX_TIMEOUT_MS;
    },
    { error: (issue) => `${describeValue(issue.input)} is out of range: use between 1 ms and 24.8 days` },
  );

/**
 * How long something may stay silent before it is stopped as stalled (`agent.stallTimeoutMs`,
 * `heartbeatTimeoutMs`, `model.stallTimeoutMs`): a duration of at most 24.8 days, 0 turning it off.
 */
export const silenceTimeoutSchema = (description: string) =>
  durationSchema(description).refine(
    (value) => {
      if (!isDuration(value)) return true;
      return parseDurationMs(value, '') <= MAX_TIMEOUT_MS;
    },
    {
      error: (issue) =>
        `${describeValue(issue.input)} is out of range: use at most 24.8 days (0 turns it off)`,
    },
  );

export const jsonValueSchema = z.unknown().refine((value) => isJsonValue(value), {
  error: 'must be plain JSON (no NaN, Infinity or non-plain objects)',
});

function isJsonValue(value: unknown, ancestors: object[] = []): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object' || ancestors.includes(value)) return false;
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return false;
  const inner = [...ancestors, value];
  return Object.values(value).every((item) => isJsonValue(item, inner));
}

/** One element of a command's argv: not empty, no control character (checked here, not at run time). */
export const argvElementSchema = z
  .string()
  .min(1, { error: 'an argument cannot be empty' })
  .superRefine((arg, ctx) => {
    const code = firstControlCharacter(arg);
    if (code !== undefined) ctx.addIssue({ code: 'custom', message: controlCharacterProblem(code) });
  });

/** One `checkpoint.exclude` pattern: relative, gitignore-like, no `..` or control characters. */
const excludePatternSchema = z
  .string({ error: (issue) => `expected a pattern (a string), got ${describeValue(issue.input)}` })
  .min(1, { error: 'an empty pattern excludes nothing: remove it' })
  .max(200, { error: 'a pattern is at most 200 characters' })
  .refine((pattern) => firstControlCharacter(pattern) === undefined, {
    error: 'contains a control character: a path pattern cannot hold one; remove it',
  })
  .refine((pattern) => !pattern.split('/').includes('..'), {
    error: (issue) => `${describeValue(issue.input)} leaves the workspace: a pattern names paths inside it`,
  });

/** `checkpoint:` of a step or of `defaults`: workspace, none, or { exclude: [...] } (workspace with more left out). */
export function checkpointSchema(description: string) {
  return z
    .union(
      [
        z.enum(['workspace', 'none']),
        strictObject(
          {
            exclude: z
              .array(excludePatternSchema)
              .max(100, { error: 'at most 100 exclude patterns' })
              .describe(
                'gitignore-like patterns left out of the checkpoint besides .git/ and node_modules/: node_modules/ (a folder anywhere), *.log, /build (at the top only).',
              ),
          },
          'checkpoint: workspace, none or { exclude: [...] }',
        ),
      ],
      {
        error: (issue) =>
          `${describeValue(issue.input)} is not allowed: use workspace, none or { exclude: [patterns] }`,
      },
    )
    .describe(description);
}

const notBeforeProblem = (input: unknown) =>
  `${describeValue(input)} is not a date-time: use an ISO 8601 date-time with an offset, e.g. ${DATE_TIME_EXAMPLE}, or a template resolving to one, e.g. "{{inputs.when}}"`;

/** `notBefore:` of a step: a date-time with an offset, or a template that renders to one when the step is ready. */
export const notBeforeSchema = z
  .string({ error: (issue) => notBeforeProblem(issue.input) })
  .max(500, { error: 'at most 500 characters' })
  .refine((value) => value.includes('{{') || instantOf(value) !== undefined, {
    error: (issue) => notBeforeProblem(issue.input),
  })
  .describe(
    `The step's first attempt is not due before this instant: an ISO 8601 date-time with an offset (${DATE_TIME_EXAMPLE}), or a template resolving to one ("{{inputs.when}}", "{{steps.<id>.result.<path>}}"), rendered when the step becomes ready; one that renders to anything else blocks the step as invalid. With delayBeforeMs too, the later of the two. Default: none.`,
  );

/** `priority:` of a step or a plan: a whole number from 0 to 9, higher first. */
export function prioritySchema(description: string) {
  const problem = (input: unknown) =>
    `${describeValue(input)} is not a priority: use a whole number from 0 (default) to 9 (first)`;
  return z
    .number({ error: (issue) => problem(issue.input) })
    .int({ error: (issue) => problem(issue.input) })
    .min(0, { error: (issue) => problem(issue.input) })
    .max(9, { error: (issue) => problem(issue.input) })
    .describe(description);
}

/** `flow:` of a step or of `defaults`: a flow key (a template) with the limit of every key it renders to. */
export function flowSchema(description: string) {
  return strictObject(
    {
      key: z
        .string({
          error: (issue) =>
            `expected a flow key, e.g. "customer:{{inputs.customer}}", got ${describeValue(issue.input)}`,
        })
        .min(1, { error: 'expected a flow key, e.g. "customer:{{inputs.customer}}"' })
        .max(200, { error: 'a flow key is at most 200 characters' })
        .describe(
          'The flow key, a template over inputs, the results of the steps it depends on and a fan-out\'s item, rendered for each run (and item): "customer:{{inputs.customer}}".',
        ),
      concurrency: z
        .number()
        .int()
        .min(1)
        .max(100_000)
        .optional()
        .describe(
          'Attempts running at once under each key it renders to, across runs and workers (1..100000).',
        ),
      rate: z
        .string()
        .max(50)
        .optional()
        .describe(
          'At most this many attempts started in any window under each key it renders to, e.g. "10/m", "100/h".',
        ),
    },
    'flow: { key, concurrency?, rate? }',
  ).describe(description);
}
