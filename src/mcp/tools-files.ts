import { z } from 'zod';
import type { McpContext } from './mcp-context.js';
import { defineTool, runIdField, stepIdField } from './tool-kit.js';

/** The runtime, loaded by the first call (see runtime-calls.ts). */
const runtime = () => import('./runtime-calls.js');

/**
 * The tools on a run's workspace checkpoints (`checkpoint: workspace`): file_changes (read-only,
 * always served) and rollback_run (served with --allow-run: it rewrites the user's files); and
 * rerun_run (with --allow-run: work runs again without a person's approval), which restores them.
 */

const MAX_PATCH_BYTES = 256 * 1024;

export const fileChangesTool = defineTool({
  name: 'file_changes',
  description:
    'What each checkpointed step of a run (checkpoint: workspace) added, changed and removed in its workspace, with a unified diff of text files (secrets masked), at most maxBytes of diff per step.',
  input: {
    runId: runIdField,
    stepId: stepIdField.optional().describe('one step (default: every checkpointed step)'),
    maxBytes: z
      .number()
      .int()
      .min(0)
      .max(MAX_PATCH_BYTES)
      .optional()
      .describe(
        `the unified diff of each step, at most this many bytes (default 16384, at most ${MAX_PATCH_BYTES})`,
      ),
  },
  output: { runId: z.string(), steps: z.array(z.looseObject({ stepId: z.string() })) },
  readOnly: true,
  call: async ({ runId, stepId, maxBytes }, ctx: McpContext) => {
    const { fileChanges } = await runtime();
    return fileChanges(await ctx.existingCommands(), {
      runId,
      ...(stepId === undefined ? {} : { stepId }),
      maxBytes: maxBytes ?? 16_384,
    });
  },
});

export const rollbackTool = defineTool({
  name: 'rollback_run',
  description:
    "Put a run's workspace back as it was before a step (its checkpoint); the steps keep their state. Refused while the run is running or awaiting approval.",
  input: { runId: runIdField, stepId: stepIdField },
  output: { stepId: z.string(), tree: z.string(), previous: z.string() },
  destructive: true,
  call: async ({ runId, stepId }, ctx: McpContext) => {
    const { rollbackRun } = await runtime();
    return { ...(await rollbackRun(await ctx.existingCommands(), { runId, stepId, by: 'mcp' })) };
  },
});

export const rerunTool = defineTool({
  name: 'rerun_run',
  description:
    'Run a step again with the steps that depend on it (baton rerun); keep: steps after it that keep their results and do not run (a mail sent is not sent again); keepEffects: keep every succeeded side-effecting step. Lists what runs again.',
  input: {
    runId: runIdField,
    from: stepIdField.describe('the step to run again, as run_status lists it'),
    only: z
      .boolean()
      .optional()
      .describe('run that step alone: the steps after it keep their results (stale)'),
    keep: z
      .array(stepIdField)
      .max(1000)
      .optional()
      .describe('steps after it that keep their results and do not run'),
    keepEffects: z.boolean().optional().describe('keep every succeeded idempotent or unsafe step after it'),
    redoEffects: z
      .boolean()
      .optional()
      .describe('forget the effects (ctx.effect) the rerun steps recorded, so they happen again'),
    keepFiles: z.boolean().optional().describe('leave the workspace as it is'),
  },
  output: {
    id: z.string(),
    status: z.string(),
    rerun: z.looseObject({
      steps: z.array(z.string()),
      kept: z.array(z.string()),
      effects: z.array(z.string()),
    }),
  },
  destructive: true,
  call: async ({ runId, from, only, keep, keepEffects, redoEffects, keepFiles }, ctx: McpContext) => {
    const { rerunRun } = await runtime();
    return {
      ...(await rerunRun(await ctx.existingCommands(), {
        runId,
        from,
        by: 'mcp',
        ...(only === undefined ? {} : { only }),
        ...(keep === undefined ? {} : { keep }),
        ...(keepEffects === undefined ? {} : { keepEffects }),
        ...(redoEffects === undefined ? {} : { redoEffects }),
        ...(keepFiles === undefined ? {} : { keepFiles }),
      })),
    };
  },
});
