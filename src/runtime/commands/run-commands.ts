import { BatonError, isBatonError } from '../../core/errors.js';
import type { StoredEvent } from '../../core/events.js';
import { FINAL_RUN_STATUSES } from '../../core/run-state.js';
import { pendingToolApprovals } from '../../core/tool-approval.js';
import { RunSecretsCache } from '../../engine/run-secrets-cache.js';
import type { EventDelivery } from '../../store/cycle/send-event.js';
import { NO_STEPS, type RunSummary } from '../../store/store.js';
import { parseDurationOption } from '../parse-values.js';
import { currentWait, requireRun, requireStepOf, runChildren } from '../run-reads.js';
import { resultOfText } from '../step-result-text.js';
import { decidedBy, eventDataJson, payloadCheck, payloadMask } from '../wait-inputs.js';
import type { CommandContext } from './context.js';

/**
 * A person's commands on a stored run, the same for every front door (the CLI's approve, reject,
 * retry, skip, resolve, cancel, resume and send; `Baton`; the console's buttons and capability URLs;
 * the MCP server's tools): a typed request in, the run's summary (masked) out, one transaction
 * each, refused with a message naming an unknown run or step.
 */

/** How long to wait before each step that follows another: a duration, ms, or none. */
export type ApprovalDelay = string | number | undefined;

/** The delay of an approval as given (`--delay 2m`, a form's `2m`, `none`, `0`, ms): ms. */
export function approvalDelayMs(delay: ApprovalDelay, where = '--delay'): number {
  if (delay === undefined) return 0;
  if (typeof delay === 'number') {
    if (!Number.isFinite(delay) || delay < 0)
      throw new BatonError('INVALID_ARGUMENT', `${where}: expected a duration of 0 or more, got ${delay}`);
    return Math.round(delay);
  }
  const text = delay.trim();
  if (text === '' || text === '0' || text.toLowerCase() === 'none') return 0;
  return parseDurationOption(text, where);
}

export interface DecideRunRequest {
  runId: string;
  decision: 'approve' | 'reject';
  /** An approval's wait before each step that follows another. */
  delay?: ApprovalDelay;
}

/** `baton approve|reject <run>`: a proposed run starts, or is dropped. */
export async function decideRun(ctx: CommandContext, request: DecideRunRequest): Promise<RunSummary> {
  await requireRun(ctx.store, request.runId);
  const now = ctx.now();
  if (request.decision === 'reject') return ctx.store.rejectRun(request.runId, now);
  const summary = await ctx.store.approveRun(request.runId, now, approvalDelayMs(request.delay));
  ctx.nudge();
  return summary;
}

/** The commands on a run or one of its steps that take nothing else. */
export type RunCommand = 'retry' | 'skip' | 'cancel' | 'resume';

export interface RunCommandRequest {
  command: RunCommand;
  runId: string;
  /** retry and skip: the step. */
  stepId?: string;
  /** cancel: run the completed steps' `compensate:` (absent: as the plan's `onFailure` says). */
  compensate?: boolean;
}

/** `baton retry|skip <run> <step>`, `baton cancel|resume <run>`. */
export async function applyRunCommand(ctx: CommandContext, request: RunCommandRequest): Promise<RunSummary> {
  const { command, runId } = request;
  await requireRun(ctx.store, runId);
  // A run's children (sub-plan steps running) are cancelled with it, recursively.
  const children = command === 'cancel' ? await runningChildren(ctx, runId) : [];
  const now = ctx.now();
  const stepId = request.stepId ?? '';
  const summary =
    command === 'retry'
      ? await ctx.store.retryStep(runId, stepId, now)
      : command === 'skip'
        ? await ctx.store.skipStep(runId, stepId, now)
        : command === 'cancel'
          ? await ctx.store.cancelRun(
              runId,
              now,
              request.compensate === undefined ? undefined : { compensate: request.compensate },
            )
          : await ctx.store.resumeRun(runId, now);
  // A cancelled run with cleanup to do (core/cleanup.ts) is still running: its cleanup is due.
  if (command !== 'cancel' || summary.status === 'running') ctx.nudge();
  for (const child of children) {
    await applyRunCommand(ctx, { command: 'cancel', runId: child }).catch((error: unknown) => {
      // A child that ended meanwhile is left as it is.
      if (!isBatonError(error) || error.code !== 'INVALID_TRANSITION') throw error;
    });
  }
  return summary;
}

/** The child runs of a run's sub-plan steps that are running now (core/sub-plans.ts), not ended yet. */
async function runningChildren(ctx: CommandContext, runId: string): Promise<string[]> {
  const run = await ctx.store.getRunSteps(runId, { statuses: ['running'], everyStepUpTo: 0 });
  if (!run) return [];
  return (await runChildren(ctx.store, run))
    .filter((child) => !FINAL_RUN_STATUSES.has(child.status))
    .map((child) => child.runId);
}

export interface ResolveStepRequest {
  runId: string;
  stepId: string;
  /** What the step came to: JSON text, or plain text (its summary). */
  result: string;
  /** Where the result was given, for messages (`--result`, `result`). */
  where?: string;
}

/** `baton resolve <run> <step>`: the step succeeds with the result a person supplies. */
export async function resolveStep(ctx: CommandContext, request: ResolveStepRequest): Promise<RunSummary> {
  const where = request.where ?? 'result';
  if (request.result.trim() === '')
    throw new BatonError('INVALID_ARGUMENT', `${where}: say what the step came to (JSON, or plain text)`);
  const result = resultOfText(request.result, where);
  requireStepOf(await requireRun(ctx.store, request.runId), request.stepId);
  const summary = await ctx.store.resolveStep(request.runId, request.stepId, result, ctx.now());
  ctx.nudge();
  return summary;
}

export interface DecideStepRequest {
  runId: string;
  stepId: string;
  decision: 'approve' | 'reject';
  /** Who decided; default the OS user running the command. */
  by?: string;
  comment?: string | null;
}

/**
 * `baton approve|reject <run> <step>`: a person ends a step waiting for approval; its result is
 * `{ approved, by, comment, at }` (`by` and `comment` trimmed; an empty comment is none).
 */
export async function decideStep(ctx: CommandContext, request: DecideStepRequest): Promise<RunSummary> {
  const made = { by: decidedBy(request.by), comment: request.comment?.trim() || null };
  const now = ctx.now();
  const summary =
    request.decision === 'approve'
      ? await ctx.store.approveStep(request.runId, request.stepId, made, now)
      : await ctx.store.rejectStep(request.runId, request.stepId, made, now);
  ctx.nudge();
  return summary;
}

export interface DecideToolCallRequest {
  runId: string;
  stepId: string;
  /** The call's id, as `baton status` shows it (the CLI's tool_use_id). */
  callId: string;
  decision: 'approve' | 'reject';
  by?: string;
  comment?: string | null;
}

export interface ToolCallDecision {
  runId: string;
  stepId: string;
  callId: string;
  tool: string;
  decision: 'allow' | 'deny';
  by: string;
  comment: string | null;
}

/**
 * `baton approve|reject <run> <step> --tool <call-id>`: a person answers a tool call the running
 * agent waits on (`agent.approve`). Recorded as an event (tool, digest of its input, who, comment);
 * the worker running the attempt hands the answer to the agent, which goes on in its session. Only
 * a call of the attempt running now, not answered yet, can be answered.
 */
export async function decideToolCall(
  ctx: CommandContext,
  request: DecideToolCallRequest,
): Promise<ToolCallDecision> {
  const run = await requireRun(ctx.store, request.runId);
  requireStepOf(run, request.stepId);
  const step = run.steps.find((s) => s.stepId === request.stepId)!;
  const events = await ctx.store.getEvents(request.runId);
  const pending = pendingToolApprovals(
    events,
    new Map(step.status === 'running' ? [[step.stepId, step.attempt]] : []),
  );
  const call = pending.find((p) => p.callId === request.callId);
  if (!call) {
    const decided = answerOf(events, request.stepId, request.callId);
    const waiting = pending.map((p) => p.callId).join(', ');
    throw (
      decided ??
      new BatonError(
        'INVALID_ARGUMENT',
        `step ${request.stepId} of run ${request.runId} has no tool call ${request.callId} waiting for approval (${waiting === '' ? `none waits; the step is ${step.status}` : `waiting: ${waiting}`})`,
      )
    );
  }
  const decision: ToolCallDecision = {
    runId: request.runId,
    stepId: request.stepId,
    callId: call.callId,
    tool: call.tool,
    decision: request.decision === 'approve' ? 'allow' : 'deny',
    by: decidedBy(request.by),
    comment: request.comment?.trim() || null,
  };
  await ctx.store.appendEvents(
    request.runId,
    [
      {
        type: 'step.tool_approval_decided',
        stepId: call.stepId,
        attempt: call.attempt,
        callId: call.callId,
        tool: call.tool,
        digest: call.digest,
        decision: decision.decision,
        by: decision.by,
        comment: decision.comment,
      },
    ],
    ctx.now(),
    // Two answers at the same instant (a person and a capability URL): the first one recorded wins.
    { afterSeq: call.requestSeq, refuse: (later) => answerOf(later, call.stepId, call.callId) },
  );
  return decision;
}

/** The refusal of a second answer to a tool call `events` hold an answer to; null: none. */
function answerOf(events: readonly StoredEvent[], stepId: string, callId: string): BatonError | null {
  const decided = events.findLast(
    (e) => e.type === 'step.tool_approval_decided' && e.stepId === stepId && e.callId === callId,
  );
  if (decided?.type !== 'step.tool_approval_decided') return null;
  return new BatonError(
    'INVALID_ARGUMENT',
    `tool call ${callId} of step ${stepId} was already ${decided.decision === 'allow' ? 'allowed' : 'denied'} by ${decided.by}`,
  );
}

export interface SendEventRequest {
  event: string;
  /** The payload as JSON text (empty: null). */
  data?: string;
  /** Where the payload was given, for messages (`--data`, `payload`, `data`). */
  where?: string;
  /** Only this run's steps; else every run's. */
  runId?: string;
}

/**
 * `baton send <event>`: the event ends the steps waiting for it, in `runId` or every run; the
 * payload (at most the payload limit, JSON) is checked against each step's `wait.schema` before
 * anything is stored, and stored with the sender's and the plan's secrets masked.
 */
export async function sendEvent(ctx: CommandContext, request: SendEventRequest): Promise<EventDelivery[]> {
  if (request.event.trim() === '')
    throw new BatonError('INVALID_ARGUMENT', 'the event name is empty: give the name a step waits for');
  const data = request.data === undefined || request.data.trim() === '' ? 'null' : request.data;
  const dataJson = eventDataJson(data, request.where ?? 'data');
  const deliveries = await ctx.store.sendEvent(
    {
      event: request.event,
      dataJson,
      ...(request.runId === undefined ? {} : { runId: request.runId }),
      checkPayload: payloadCheck(dataJson),
      maskPayload: payloadMask(dataJson, new RunSecretsCache(ctx.env, ctx.secretValues)),
    },
    ctx.now(),
  );
  ctx.nudge();
  return deliveries;
}

export interface AnswerWaitRequest {
  runId: string;
  stepId: string;
  /** approve or reject a step waiting for approval; send: the event a step waits for, with `data`. */
  action: 'approve' | 'reject' | 'send';
  by?: string;
  comment?: string | null;
  /** send: the payload as JSON text (empty: null). */
  data?: string;
}

/**
 * A person's answer to one waiting step, as the console's inbox and a capability URL give it: an
 * approval's decision, or the event the step waits for (its name read from the wait, so the payload
 * ends this step of this run only).
 */
export async function answerWait(ctx: CommandContext, request: AnswerWaitRequest): Promise<RunSummary> {
  const run = await requireRun(ctx.store, request.runId);
  requireStepOf(run, request.stepId);
  if (request.action !== 'send') {
    return decideStep(ctx, {
      runId: request.runId,
      stepId: request.stepId,
      decision: request.action,
      ...(request.by === undefined ? {} : { by: request.by }),
      comment: request.comment ?? null,
    });
  }
  // The event's name as stored: a masked one would name no event.
  const wait = await currentWait(ctx.unmasked, await requireRun(ctx.unmasked, run.id), request.stepId);
  if (!wait || wait.kind !== 'event')
    throw new BatonError(
      'INVALID_TRANSITION',
      `step ${request.stepId} of run ${run.id} does not wait for an event`,
    );
  await sendEvent(ctx, {
    event: wait.waitingFor,
    runId: run.id,
    where: 'payload',
    ...(request.data === undefined ? {} : { data: request.data }),
  });
  return (await ctx.store.getRunSteps(run.id, NO_STEPS)) ?? run;
}
