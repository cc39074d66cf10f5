import { BatonError } from '../core/errors.js';
import { cancelRuns, retryBlocked } from '../runtime/commands/bulk-commands.js';
import { forkRun, rerunRun } from '../runtime/commands/rerun-commands.js';
import {
  answerWait,
  applyRunCommand,
  approvalDelayMs,
  decideRun,
  decideToolCall,
  resolveStep,
} from '../runtime/commands/run-commands.js';
import { setSchedulePaused, triggerSchedule } from '../runtime/commands/schedule-commands.js';
import { requireRun, requireStepOf } from '../runtime/run-reads.js';
import type { ConsoleContext } from './context.js';
import { consolePath } from './html.js';

/**
 * The console's actions, each a translation of a form into one runtime command (the same the CLI
 * calls): a run's cancel, resume, approve (with the proposal's delay) and reject; a step's retry,
 * skip, resolve, rerun and fork; a waiting step's approve, reject and send; a held tool call's
 * approve and reject; a schedule's pause,
 * resume and trigger.
 */
type RunAction = (ctx: ConsoleContext, runId: string, form: URLSearchParams) => Promise<unknown>;
type StepAction = (
  ctx: ConsoleContext,
  runId: string,
  stepId: string,
  form: URLSearchParams,
) => Promise<unknown>;

const RUN_ACTIONS: Record<string, RunAction> = {
  cancel: (ctx, runId) => applyRunCommand(ctx.commands, { command: 'cancel', runId }),
  resume: (ctx, runId) => applyRunCommand(ctx.commands, { command: 'resume', runId }),
  reject: (ctx, runId) => decideRun(ctx.commands, { runId, decision: 'reject' }),
  // The proposal's question: wait this long before each step that follows another (empty: no wait).
  approve: (ctx, runId, form) =>
    decideRun(ctx.commands, {
      runId,
      decision: 'approve',
      delay: approvalDelayMs(form.get('delay') ?? undefined, 'delay'),
    }),
};

const STEP_ACTIONS: Record<string, StepAction> = {
  retry: (ctx, runId, stepId) => applyRunCommand(ctx.commands, { command: 'retry', runId, stepId }),
  skip: (ctx, runId, stepId) => applyRunCommand(ctx.commands, { command: 'skip', runId, stepId }),
  resolve: (ctx, runId, stepId, form) =>
    resolveStep(ctx.commands, { runId, stepId, result: form.get('result') ?? '', where: 'result' }),
  // Who asked: the user running `baton serve` (the console's one operator), as for approvals.
  rerun: (ctx, runId, stepId, form) =>
    rerunRun(ctx.commands, {
      runId,
      from: stepId,
      only: form.get('only') === 'on',
      redoEffects: form.get('redoEffects') === 'on',
    }),
  // The inbox's answers to a waiting step: approve or reject with a comment, or its event with a payload.
  approve: (ctx, runId, stepId, form) =>
    answerWait(ctx.commands, { runId, stepId, action: 'approve', comment: form.get('comment') }),
  reject: (ctx, runId, stepId, form) =>
    answerWait(ctx.commands, { runId, stepId, action: 'reject', comment: form.get('comment') }),
  send: (ctx, runId, stepId, form) =>
    answerWait(ctx.commands, { runId, stepId, action: 'send', data: form.get('payload') ?? '' }),
  // The inbox's answers to a tool call a running agent waits on: its call id and a comment.
  'approve-tool': toolDecision('approve'),
  'reject-tool': toolDecision('reject'),
};

/** A form's answer to a held tool call: its call id (`tool`) and a comment. */
function toolDecision(decision: 'approve' | 'reject'): StepAction {
  return (ctx, runId, stepId, form) =>
    decideToolCall(ctx.commands, {
      runId,
      stepId,
      callId: form.get('tool') ?? '',
      decision,
      comment: form.get('comment'),
    });
}

/** Runs one action; returns where the browser goes next (the page it came from, or a fork's new run). */
export async function runAction(
  ctx: ConsoleContext,
  target: { runId: string; stepId?: string; action: string },
  form: URLSearchParams,
): Promise<string> {
  const { runId, stepId, action } = target;
  const run = await requireRun(ctx.commands.store, runId);
  if (stepId === undefined) {
    const apply = RUN_ACTIONS[action];
    if (!apply) throw new BatonError('INVALID_ARGUMENT', `unknown action "${action}"`);
    await apply(ctx, runId, form);
  } else if (action === 'fork') {
    requireStepOf(run, stepId);
    const forked = await forkRun(ctx.commands, { runId, from: stepId });
    return consolePath('runs', forked.summary.id);
  } else {
    const apply = STEP_ACTIONS[action];
    if (!apply) throw new BatonError('INVALID_ARGUMENT', `unknown action "${action}"`);
    requireStepOf(run, stepId);
    await apply(ctx, runId, stepId, form);
  }
  const back = form.get('back');
  if (back === 'inbox') return '/inbox';
  if (back === 'step' && stepId !== undefined) return consolePath('runs', runId, 'steps', stepId);
  return consolePath('runs', runId);
}

const SCHEDULE_ACTIONS: Record<string, (ctx: ConsoleContext, name: string) => Promise<unknown>> = {
  pause: (ctx, name) => setSchedulePaused(ctx.commands, { name, paused: true }),
  resume: (ctx, name) => setSchedulePaused(ctx.commands, { name, paused: false }),
  // The operator's own click: a paused schedule runs once too, as `baton schedule trigger` does.
  trigger: (ctx, name) => triggerSchedule(ctx.commands, { name }),
};

/** A schedule's action (pause, resume, trigger: the CLI's `baton schedule <action>`); back to the schedules. */
export async function scheduleAction(ctx: ConsoleContext, name: string, action: string): Promise<string> {
  const apply = SCHEDULE_ACTIONS[action];
  if (!apply) throw new BatonError('INVALID_ARGUMENT', `unknown action "${action}"`);
  await apply(ctx, name);
  return '/schedules';
}

/**
 * The inbox's multi-select (`POST /inbox/retry|cancel`, the runs ticked as `run` fields): every
 * blocked step of those runs retried, or the runs cancelled, as `baton retry --blocked` and
 * `baton cancel` with filters do; back to the inbox.
 */
export async function bulkAction(
  ctx: ConsoleContext,
  action: 'retry' | 'cancel',
  form: URLSearchParams,
): Promise<string> {
  const runIds = form.getAll('run').filter((id) => id !== '');
  if (runIds.length === 0) throw new BatonError('INVALID_ARGUMENT', 'no run ticked: tick the runs to act on');
  const request = { filter: { runIds, ...(action === 'cancel' ? { blocked: true } : {}) } };
  if (action === 'retry') await retryBlocked(ctx.commands, request);
  else await cancelRuns(ctx.commands, request);
  return '/inbox';
}
