import { z } from 'zod';
import { defineTool, runIdField, runSummaryOutput, stepIdField } from './tool-kit.js';
import { summaryOf } from './tools-runs.js';

/** The runtime, loaded by the first call (see runtime-calls.ts). */
const runtime = () => import('./runtime-calls.js');

/**
 * The tools on one step: a waiting step's answers (approve_step, reject_step, send_event) and a
 * blocked step's (retry_step, skip_step, resolve_step), each a runtime command (run-commands.ts).
 */

const decision = {
  runId: runIdField,
  stepId: stepIdField,
  comment: z.string().max(10_000).optional().describe("the person's words, kept in the step's result"),
  by: z.string().max(200).optional().describe('who decided (default: the OS user running the server)'),
};

/** Any JSON value (a payload, a result). */
const jsonValue = z.unknown();

export const stepTools = [
  ...(['approve', 'reject'] as const).map((verb) =>
    defineTool({
      name: `${verb}_step`,
      description:
        verb === 'approve'
          ? "Approve a step that waits for approval (wait: { for: approval }), relaying the person's answer; the steps after it may start."
          : "Reject a step that waits for approval, relaying the person's answer; the steps after it are skipped.",
      input: {
        ...decision,
        toolCallId: z
          .string()
          .max(200)
          .optional()
          .describe(`${verb} this tool call the running agent waits on instead (run_status: toolApprovals)`),
      },
      output: runSummaryOutput,
      destructive: verb === 'reject',
      call: async ({ runId, stepId, comment, by, toolCallId }, ctx) => {
        const { decideStep, decideToolCall, requireRun } = await runtime();
        const decision = { runId, stepId, decision: verb, ...(by === undefined ? {} : { by }) };
        if (toolCallId !== undefined) {
          const commands = await ctx.existingCommands();
          await decideToolCall(commands, { ...decision, callId: toolCallId, comment: comment ?? null });
          return summaryOf(await requireRun(commands.store, runId));
        }
        return summaryOf(
          await decideStep(await ctx.existingCommands(), { ...decision, comment: comment ?? null }),
        );
      },
    }),
  ),
  defineTool({
    name: 'send_event',
    description:
      'Send an event: it ends the steps waiting for it (wait: { for: event }) in runId, or in every run; data is the payload, their result.',
    input: {
      event: z.string().min(1).max(500).describe('the event name a step waits for'),
      runId: runIdField
        .optional()
        .describe('only this run (it keeps the event for a step that does not wait yet)'),
      data: jsonValue
        .optional()
        .describe('the payload: any JSON value (default null), at most 1 MiB as JSON (the payload limit)'),
    },
    output: { deliveries: z.array(z.looseObject({ runId: z.string(), outcome: z.string() })) },
    call: async ({ event, runId, data }, ctx) => {
      const { sendEvent } = await runtime();
      const deliveries = await sendEvent(await ctx.existingCommands(), {
        event,
        data: JSON.stringify(data ?? null),
        where: 'data',
        ...(runId === undefined ? {} : { runId }),
      });
      return { deliveries };
    },
  }),
  ...(['retry', 'skip'] as const).map((command) =>
    defineTool({
      name: `${command}_step`,
      description:
        command === 'retry'
          ? 'Run a blocked (or waiting) step again now, with fresh tries (after the person fixed the cause).'
          : 'Mark a step skipped so the steps after it can go on without it.',
      input: { runId: runIdField, stepId: stepIdField },
      output: runSummaryOutput,
      destructive: command === 'skip',
      call: async ({ runId, stepId }, ctx) => {
        const { applyRunCommand } = await runtime();
        return summaryOf(await applyRunCommand(await ctx.existingCommands(), { command, runId, stepId }));
      },
    }),
  ),
  defineTool({
    name: 'resolve_step',
    description:
      'Say what a blocked step came to (e.g. an unsafe step interrupted mid-effect that did happen); it succeeds with this result.',
    input: {
      runId: runIdField,
      stepId: stepIdField,
      result: jsonValue
        .refine((value) => value !== undefined, 'give the result: any JSON value (text: a string)')
        .describe(
          "the step's result: any JSON value (text: a string), at most 1 MiB as JSON (the payload limit)",
        ),
    },
    output: runSummaryOutput,
    call: async ({ runId, stepId, result }, ctx) => {
      const { resolveStep } = await runtime();
      const given = { runId, stepId, result: JSON.stringify(result), where: 'result' };
      return summaryOf(await resolveStep(await ctx.existingCommands(), given));
    },
  }),
];
