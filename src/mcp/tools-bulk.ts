import { z } from 'zod';
import { FAILURE_CLASSES } from '../core/failure.js';
import { defineTool } from './tool-kit.js';

/** The runtime, loaded by the first call (see runtime-calls.ts). */
const runtime = () => import('./runtime-calls.js');

/**
 * The tools over many runs at once (runtime/commands/bulk-commands.ts), served only with
 * `--allow-run`: retry_blocked (every blocked step the filters choose runs again) and cancel_runs.
 * Each answers the runs it touched, or with `dryRun` the runs it would touch.
 */

const filter = {
  failureClass: z.enum(FAILURE_CLASSES).optional().describe('only steps blocked with this failure class'),
  since: z
    .string()
    .max(40)
    .optional()
    .describe('only steps blocked (cancel_runs without blocked: runs created) within this long, e.g. "2h"'),
  plan: z.string().max(200).optional().describe('only runs of this plan (its name)'),
  labels: z
    .record(z.string().max(63), z.string().max(200))
    .optional()
    .describe('only runs with every one of these labels, e.g. {"team": "growth"}'),
  dryRun: z.boolean().optional().describe('list what it would touch and change nothing (default false)'),
};

const output = {
  dryRun: z.boolean(),
  runs: z.array(z.looseObject({ runId: z.string(), outcome: z.string() })),
};

type FilterArgs = {
  failureClass?: (typeof FAILURE_CLASSES)[number] | undefined;
  since?: string | undefined;
  plan?: string | undefined;
  labels?: Record<string, string> | undefined;
  blocked?: boolean | undefined;
};

async function runsFilter(args: FilterArgs) {
  const { parseDurationOption } = await runtime();
  return {
    ...(args.blocked ? { blocked: true } : {}),
    ...(args.failureClass !== undefined ? { failureClass: args.failureClass } : {}),
    ...(args.since !== undefined ? { sinceMs: parseDurationOption(args.since, 'since') } : {}),
    ...(args.plan !== undefined ? { planName: args.plan } : {}),
    ...(args.labels !== undefined ? { labels: args.labels } : {}),
  };
}

export const bulkTools = [
  defineTool({
    name: 'retry_blocked',
    description:
      'Retry every blocked step the filters choose (none: every blocked step), e.g. after a provider outage: failureClass "transient", since "2h". Answers each run touched; dryRun only lists them. This server allows it: --allow-run.',
    input: filter,
    output,
    call: async (args, ctx) => {
      const { retryBlocked } = await runtime();
      const answer = await retryBlocked(await ctx.existingCommands(), {
        filter: await runsFilter(args),
        ...(args.dryRun ? { dryRun: true } : {}),
      });
      return { ...answer };
    },
  }),
  defineTool({
    name: 'cancel_runs',
    description:
      'Cancel every unfinished run the filters choose (at least one filter); their running agents are stopped. Answers each run touched; dryRun only lists them. This server allows it: --allow-run.',
    input: {
      ...filter,
      blocked: z.boolean().optional().describe('only runs that are blocked'),
      compensate: z
        .boolean()
        .optional()
        .describe(
          "run each run's compensate: steps before it is cancelled (default: as its plan's onFailure says)",
        ),
    },
    output,
    destructive: true,
    call: async (args, ctx) => {
      const { cancelRuns } = await runtime();
      const answer = await cancelRuns(await ctx.existingCommands(), {
        filter: await runsFilter(args),
        ...(args.dryRun ? { dryRun: true } : {}),
        ...(args.compensate === undefined ? {} : { compensate: args.compensate }),
      });
      return { ...answer };
    },
  }),
];
