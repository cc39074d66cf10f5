import { BatonError } from '../core/errors.js';
import { trustedPrograms } from '../executors/trusted-programs.js';
import { forkRun } from '../runtime/fork-run.js';
import { parseDurationOption } from '../runtime/parse-values.js';
import { resultOfText } from '../runtime/step-result-text.js';
import { decidedBy } from '../runtime/wait-inputs.js';
import type { RunDetail, RunSummary, Store } from '../store/store.js';
import type { ConsoleContext } from './context.js';
import { consolePath } from './html.js';
import { requireRun, requireStep } from './lookups.js';
import { currentWait, decideWait, sendWaitEvent } from './wait-answers.js';

/**
 * The console's actions: the same Store methods the CLI commands call (retry, skip, resolve,
 * cancel, resume, approve, reject; a waiting step's approve, reject and send; rerun from a step),
 * one transaction each, and a fork from a step (runtime/fork-run.ts, as `baton fork`).
 */
type RunAction = (store: Store, runId: string, form: URLSearchParams, now: number) => Promise<RunSummary>;
type StepAction = (
  store: Store,
  runId: string,
  stepId: string,
  form: URLSearchParams,
  now: number,
) => Promise<RunSummary>;

const RUN_ACTIONS: Record<string, RunAction> = {
  cancel: (store, runId, _form, now) => store.cancelRun(runId, now),
  resume: (store, runId, _form, now) => store.resumeRun(runId, now),
  reject: (store, runId, _form, now) => store.rejectRun(runId, now),
  approve: (store, runId, form, now) => {
    // The proposal's question: wait this long before each step that follows another (empty: no wait).
    const delay = form.get('delay')?.trim() ?? '';
    const delayMs =
      delay === '' || delay === '0' || delay === 'none' ? 0 : parseDurationOption(delay, 'delay');
    return store.approveRun(runId, now, delayMs);
  },
};

const STEP_ACTIONS: Record<string, StepAction> = {
  retry: (store, runId, stepId, _form, now) => store.retryStep(runId, stepId, now),
  skip: (store, runId, stepId, _form, now) => store.skipStep(runId, stepId, now),
  resolve: (store, runId, stepId, form, now) => {
    const text = form.get('result') ?? '';
    if (text.trim() === '')
      throw new BatonError('INVALID_ARGUMENT', 'result: say what the step came to (JSON, or plain text)');
    return store.resolveStep(runId, stepId, resultOfText(text, 'result'), now);
  },
  // Who asked: the user running `baton serve` (the console's one operator), as for approvals.
  rerun: (store, runId, stepId, form, now) =>
    store.rerunFrom(
      runId,
      {
        from: stepId,
        only: form.get('only') === 'on',
        redoEffects: form.get('redoEffects') === 'on',
        by: decidedBy(),
      },
      now,
    ),
};

/** The inbox's answers to a waiting step: approve or reject with a comment, or its event with a payload. */
async function answerWait(
  ctx: ConsoleContext,
  run: RunDetail,
  stepId: string,
  action: 'approve' | 'reject' | 'send',
  form: URLSearchParams,
): Promise<void> {
  if (action !== 'send') {
    await decideWait(ctx.store, run.id, stepId, action, { comment: form.get('comment') }, ctx.now());
    return;
  }
  const wait = await currentWait(ctx.unmasked, run, stepId);
  if (!wait || wait.kind !== 'event')
    throw new BatonError('INVALID_TRANSITION', `step ${stepId} of run ${run.id} does not wait for an event`);
  await sendWaitEvent(
    ctx.store,
    run.id,
    wait.waitingFor,
    form.get('payload') ?? '',
    ctx.secretsOf,
    ctx.now(),
  );
}

/** Runs one action; returns where the browser goes next (the page it came from). */
export async function runAction(
  ctx: ConsoleContext,
  target: { runId: string; stepId?: string; action: string },
  form: URLSearchParams,
): Promise<string> {
  const { runId, stepId, action } = target;
  const run = await requireRun(ctx.store, runId);
  if (stepId === undefined) {
    const apply = RUN_ACTIONS[action];
    if (!apply) throw new BatonError('INVALID_ARGUMENT', `unknown action "${action}"`);
    await apply(ctx.store, runId, form, ctx.now());
  } else if (action === 'fork') {
    requireStep(run, stepId);
    // A new run: the browser goes to it. Read unmasked: kept results are copied as stored.
    const forked = await forkRun(ctx.unmasked, {
      runId,
      from: stepId,
      batonHome: ctx.home,
      trust: () => trustedPrograms(ctx.home, process.env),
      now: ctx.now(),
    });
    return consolePath('runs', forked.summary.id);
  } else if (action === 'approve' || action === 'reject' || action === 'send') {
    requireStep(run, stepId);
    await answerWait(ctx, run, stepId, action, form);
  } else {
    const apply = STEP_ACTIONS[action];
    if (!apply) throw new BatonError('INVALID_ARGUMENT', `unknown action "${action}"`);
    requireStep(run, stepId);
    await apply(ctx.store, runId, stepId, form, ctx.now());
  }
  const back = form.get('back');
  if (back === 'inbox') return '/inbox';
  if (back === 'step' && stepId !== undefined) return consolePath('runs', runId, 'steps', stepId);
  return consolePath('runs', runId);
}
