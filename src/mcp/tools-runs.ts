import { z } from 'zod';
import { planIndex, RUN_STATUSES } from '../core/run-state.js';
import { staleSteps } from '../core/stale-steps.js';
import { verificationOf } from '../core/verify.js';
import type { RunSummary, RunWithSteps } from '../runtime/types.js';
import type { McpContext } from './mcp-context.js';
import { defineTool, runIdField, runSummaryOutput, stepIdField } from './tool-kit.js';

/** The runtime, loaded by the first call (see runtime-calls.ts). */
const runtime = () => import('./runtime-calls.js');

/** The tools on runs: approve_run, reject_run, list_runs, run_status, timeline, step_log, cancel_run, check. */

/** A run's summary as the tools that change a run answer it. */
export function summaryOf(run: RunSummary) {
  return {
    runId: run.id,
    planName: run.planName,
    status: run.status,
    blockedReason: run.blockedReason,
    stepCounts: run.stepCounts,
    attemptsTotal: run.attemptsTotal,
  };
}

/** What a host may call about a step in this state: the tools that act on it. */
function stepActions(run: RunWithSteps, step: RunWithSteps['steps'][number]): string[] {
  if (step.status === 'blocked') {
    const declared = run.plan.steps[planIndex(run.plan).position.get(step.stepId)!];
    const wait = declared?.wait?.for;
    return wait === 'approval'
      ? ['approve_step', 'reject_step', 'retry_step', 'skip_step']
      : wait === 'event'
        ? ['send_event', 'retry_step', 'skip_step']
        : ['retry_step', 'skip_step', 'resolve_step'];
  }
  if (step.status === 'waiting') {
    const declared = run.plan.steps[planIndex(run.plan).position.get(step.stepId)!];
    return declared?.wait?.for === 'event' ? ['send_event'] : ['approve_step', 'reject_step'];
  }
  return [];
}

/** One step as run_status lists it: its state, its result's summary, and what acts on it. */
function stepView(run: RunWithSteps, step: RunWithSteps['steps'][number]) {
  let summary: string | null = null;
  const verification = verificationOf(step.resultJson);
  if (step.resultJson !== null) {
    try {
      summary = (JSON.parse(step.resultJson) as { summary?: string }).summary ?? null;
    } catch {
      summary = null;
    }
  }
  return {
    stepId: step.stepId,
    title: step.title,
    status: step.status,
    attempt: step.attempt,
    dueAt: step.dueAt,
    lastError: step.lastError,
    lastFailureClass: step.lastFailureClass,
    blockedReason: step.blockedReason,
    ...(step.waitingFor === undefined ? {} : { waitingFor: step.waitingFor }),
    resultSummary: summary === null ? null : summary.slice(0, 2_000),
    ...(verification ? { verification } : {}),
    actions: stepActions(run, step),
  };
}

/** `run_status`: `baton status <run> --json`'s read, in the form a model reads best. */
export async function runStatusView(ctx: McpContext, runId: string) {
  const commands = await ctx.existingCommands();
  const { flowWaits, requireRunSteps, runChildren, waitingToolCalls } = await runtime();
  const run = await requireRunSteps(commands.store, runId, false);
  const total = Object.values(run.stepCounts).reduce((sum, count) => sum + (count ?? 0), 0);
  return {
    ...summaryOf(run),
    workspace: run.workspace,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    finishedAt: run.finishedAt,
    usage: run.usage,
    steps: run.steps.map((step) => stepView(run, step)),
    stepsListed: run.steps.length,
    stepsTotal: total,
    flowWaits: await flowWaits(commands.store, run, commands.now()),
    // Tool calls its running agents wait on a person for: approve_step / reject_step with toolCallId.
    toolApprovals: await waitingToolCalls(commands.store, run),
    ...(run.plan.forkedFrom ? { forkedFrom: run.plan.forkedFrom } : {}),
    // The tree: the run that started this one (a sub-plan step), and the children its steps wait on.
    ...(run.plan.parent ? { parentRunId: run.plan.parent.runId, parentStepId: run.plan.parent.stepId } : {}),
    children: await runChildren(commands.store, run),
    // Known when every step is listed (as `baton status` marks them): kept results resting on an older one.
    stale: run.steps.length === run.plan.steps.length ? staleSteps(run) : [],
  };
}

const MAX_LOG_BYTES = 32_768;

export const runTools = [
  defineTool({
    name: 'approve_run',
    description:
      'Start a proposed run: relay the person\'s yes. delay (e.g. "2m") is their answer to the proposal\'s question; omit it for no wait.',
    input: {
      runId: runIdField,
      delay: z
        .string()
        .max(40)
        .optional()
        .describe(
          'wait this long before each step that follows another, e.g. "2m"; "none" or "0": no wait (the default)',
        ),
    },
    output: runSummaryOutput,
    call: async ({ runId, delay }, ctx) => {
      const { approvalDelayMs, decideRun } = await runtime();
      // The one parser of a delay (none, 0, a duration, ms), its messages naming this field.
      const delayMs = approvalDelayMs(delay, 'delay');
      return summaryOf(
        await decideRun(await ctx.existingCommands(), { runId, decision: 'approve', delay: delayMs }),
      );
    },
  }),
  defineTool({
    name: 'reject_run',
    description: 'Drop a proposed run the person said no to; nothing of it runs.',
    input: { runId: runIdField },
    output: runSummaryOutput,
    destructive: true,
    call: async ({ runId }, ctx) => {
      const { decideRun } = await runtime();
      return summaryOf(await decideRun(await ctx.existingCommands(), { runId, decision: 'reject' }));
    },
  }),
  defineTool({
    name: 'list_runs',
    description:
      'Recent runs, newest first: id, plan, status, step counts, labels; filtered by status, plan and labels.',
    input: {
      status: z.enum(RUN_STATUSES).optional().describe('only runs in this status'),
      plan: z.string().max(200).optional().describe('only runs of this plan (its name)'),
      labels: z
        .record(z.string().max(63), z.string().max(200))
        .optional()
        .describe('only runs with every one of these labels, e.g. {"team": "growth"}'),
      limit: z.number().int().min(1).max(100).optional().describe('how many (default 20)'),
    },
    output: { runs: z.array(z.looseObject({ runId: z.string(), status: z.string() })) },
    readOnly: true,
    call: async ({ status, plan, labels, limit }, ctx) => {
      if (!ctx.hasStore()) return { runs: [] };
      const { store } = await ctx.commands();
      const runs = await store.listRuns({
        limit: limit ?? 20,
        ...(status === undefined ? {} : { status }),
        ...(plan === undefined ? {} : { planName: plan }),
        ...(labels === undefined ? {} : { labels }),
      });
      const labelled = await store.getRunLabels(runs.map((run) => run.id));
      return {
        runs: runs.map((run) => ({
          ...summaryOf(run),
          createdAt: run.createdAt,
          updatedAt: run.updatedAt,
          ...(labelled[run.id] ? { labels: labelled[run.id] } : {}),
        })),
      };
    },
  }),
  defineTool({
    name: 'run_status',
    description:
      "One run: its status, each step's status, attempts and last error, for a blocked or waiting step the tools that act on it (of a run over 100 steps, the steps needing a look), and its parent run and the child runs its sub-plan steps wait on.",
    input: { runId: runIdField },
    output: {
      ...runSummaryOutput,
      steps: z.array(z.looseObject({ stepId: z.string(), status: z.string() })),
    },
    readOnly: true,
    call: async ({ runId }, ctx) => {
      return runStatusView(ctx, runId);
    },
  }),
  defineTool({
    name: 'timeline',
    description:
      "A run's events in order (run.created, step.started, step.failed, step.succeeded, ...): the last limit.",
    input: {
      runId: runIdField,
      limit: z.number().int().min(1).max(500).optional().describe('the last this many events (default 100)'),
    },
    output: { runId: z.string(), events: z.array(z.looseObject({ seq: z.number(), type: z.string() })) },
    readOnly: true,
    call: async ({ runId, limit }, ctx) => {
      const { store } = await ctx.existingCommands();
      const { requireRun } = await runtime();
      await requireRun(store, runId);
      const events = await store.getEvents(runId);
      const kept = events.slice(-(limit ?? 100));
      return { runId, events: kept, eventsTotal: events.length, truncated: kept.length < events.length };
    },
  }),
  defineTool({
    name: 'step_log',
    description:
      "The end of a step attempt's output (the last attempt unless given), secrets masked, at most maxBytes.",
    input: {
      runId: runIdField,
      stepId: stepIdField,
      attempt: z.number().int().min(1).optional().describe('which attempt (default: the last)'),
      maxBytes: z
        .number()
        .int()
        .min(1)
        .max(MAX_LOG_BYTES)
        .optional()
        .describe(`the end of the log, at most this many bytes (default 8192, at most ${MAX_LOG_BYTES})`),
    },
    output: { runId: z.string(), stepId: z.string(), text: z.string(), truncated: z.boolean() },
    readOnly: true,
    call: async ({ runId, stepId, attempt, maxBytes }, ctx) => {
      const { readStepLog } = await runtime();
      const log = await readStepLog(await ctx.existingCommands(), {
        runId,
        stepId,
        ...(attempt === undefined ? {} : { attempt }),
        maxBytes: maxBytes ?? 8_192,
      });
      return { ...log };
    },
  }),
  defineTool({
    name: 'cancel_run',
    description:
      "Cancel a run: no step of it starts again; running agents are stopped. Its cleanup runs first (the plan's finally: steps; with compensate, the compensate: of every completed step, in reverse order), then it is cancelled.",
    input: {
      runId: runIdField,
      compensate: z
        .boolean()
        .optional()
        .describe("run the completed steps' compensate: (default: as the plan's onFailure says)"),
    },
    output: runSummaryOutput,
    destructive: true,
    call: async ({ runId, compensate }, ctx) => {
      const { applyRunCommand } = await runtime();
      return summaryOf(
        await applyRunCommand(await ctx.existingCommands(), {
          command: 'cancel',
          runId,
          ...(compensate === undefined ? {} : { compensate }),
        }),
      );
    },
  }),
  defineTool({
    name: 'check',
    description:
      'Run the steps that are due now for at most maxSeconds (default 30, at most 300), as baton check does; then the blocked runs and the waiting steps.',
    input: {
      maxSeconds: z.number().int().min(1).max(300).optional().describe('stop after this long (default 30)'),
    },
    output: { attemptsStarted: z.number(), blocked: z.array(z.unknown()), waiting: z.array(z.unknown()) },
    call: async ({ maxSeconds }, ctx) => {
      if (!ctx.hasStore()) return { attemptsStarted: 0, blocked: [], waiting: [], waitingTotal: 0 };
      const { checkDueWork, engineSettings } = await runtime();
      const checked = await checkDueWork(await ctx.commands(), {
        maxTimeMs: (maxSeconds ?? 30) * 1000,
        settings: engineSettings(ctx.options, ctx.env),
        observers: {
          onError: (error) =>
            process.stderr.write(`baton mcp: store busy or failing, retrying: ${String(error)}\n`),
          onHookFailure: (message) => process.stderr.write(`baton mcp: ${message}\n`),
        },
      });
      return { ...checked };
    },
  }),
];
