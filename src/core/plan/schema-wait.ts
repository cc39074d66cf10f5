import { z } from 'zod';
import { instantOf } from './date-time.js';
import { isDuration, parseDurationMs } from './duration.js';
import { jsonValueSchema, MAX_TIMEOUT_MS, strictObject } from './schema-fields.js';
import { describeValue } from './zod-issues.js';

/** The deadline a wait's `timeout` names (a date-time with an offset), in ms since the epoch; undefined when it is not one. */
export const waitDeadlineAt = instantOf;

const timeoutProblem = (input: unknown) =>
  `${describeValue(input)} is not a timeout: use a duration (e.g. "30m", "24h", "7d", at most 24.8 days) or an ISO 8601 date-time with an offset (e.g. "2026-12-24T18:00:00+08:00")`;

const waitTimeoutSchema = z
  .union([z.string(), z.number()], { error: (issue) => timeoutProblem(issue.input) })
  .refine(
    (value) => {
      if (waitDeadlineAt(value) !== undefined) return true;
      if (!isDuration(value)) return false;
      const ms = parseDurationMs(value, 'timeout');
      return ms >= 1 && ms <= MAX_TIMEOUT_MS;
    },
    { error: (issue) => timeoutProblem(issue.input) },
  )
  .describe(
    'How long the step waits: a duration from when it starts waiting ("24h", at most 24.8 days), or an absolute deadline, an ISO 8601 date-time with an offset ("2026-12-24T18:00:00+08:00"). Default: no timeout.',
  );

/** `wait:` of a step: it waits for a person (`approval`) or an event (`event`), with no body. */
export const waitSchema = strictObject(
  {
    for: z
      .enum(['approval', 'event'], {
        error: (issue) => `expected approval or event, got ${describeValue(issue.input)}`,
      })
      .describe('approval: ended by baton approve / baton reject; event: ended by baton send <event>.'),
    prompt: z
      .string()
      .min(1)
      .optional()
      .describe(
        'For an approval: what the person is asked, shown by baton status. May use the templates of instruction. Default: "Approve step <id>?".',
      ),
    event: z
      .string()
      .min(1)
      .optional()
      .describe(
        'For an event (required): its name, as baton send <event> gives it. May use the templates of instruction, e.g. "deploy-{{inputs.env}}".',
      ),
    timeout: waitTimeoutSchema.optional(),
    onTimeout: z
      .enum(['block', 'skip', 'reject'], {
        error: (issue) => `expected block, skip or reject, got ${describeValue(issue.input)}`,
      })
      .optional()
      .describe(
        'What the timeout does: block (the step is blocked for a human, who may still approve, reject or send), skip (the step is skipped and the steps after it run), reject (a rejection: the steps after it are skipped). Default block.',
      ),
    schema: z
      .record(z.string(), jsonValueSchema)
      .optional()
      .describe('For an event: a JSON Schema its payload must match; baton send refuses one that does not.'),
  },
  'a wait: { for: approval | event, prompt?, event?, timeout?, onTimeout?, schema? }',
).describe(
  'Makes this a wait step (no instruction, fn or model): when due it waits, holding no lease and no process, for a person (approval) or an event.',
);
