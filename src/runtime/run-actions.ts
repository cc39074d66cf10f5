import { BatonError } from '../core/errors.js';
import type { StepResult } from '../core/run-state.js';
import { RunSecretsCache } from '../engine/run-secrets-cache.js';
import type { RunSummary, Store } from '../store/store.js';
import { requireRun } from './run-reads.js';
import { decidedBy, payloadCheck, payloadMask } from './wait-inputs.js';

/**
 * A person's commands on a stored run, as every front door gives them (the CLI's approve, reject,
 * retry, skip, resolve, cancel, resume and send; the console; the MCP server's tools): one
 * transaction each, refused with a message naming the unknown run or step.
 */

/** `baton approve <run> [--delay]` / `baton reject <run>`: a proposed run starts, or is dropped. */
export async function decideRun(
  store: Store,
  decision: 'approve' | 'reject',
  runId: string,
  delayMs: number,
  now: number,
): Promise<RunSummary> {
  await requireRun(store, runId);
  return decision === 'approve' ? store.approveRun(runId, now, delayMs) : store.rejectRun(runId, now);
}

/** The commands on a run or one of its steps that take nothing else. */
export type RunCommand = 'retry' | 'skip' | 'cancel' | 'resume';

const COMMANDS: Record<
  RunCommand,
  (store: Store, runId: string, stepId: string, now: number) => Promise<RunSummary>
> = {
  retry: (store, runId, stepId, now) => store.retryStep(runId, stepId, now),
  skip: (store, runId, stepId, now) => store.skipStep(runId, stepId, now),
  cancel: (store, runId, _stepId, now) => store.cancelRun(runId, now),
  resume: (store, runId, _stepId, now) => store.resumeRun(runId, now),
};

/** `baton retry|skip <run> <step>`, `baton cancel|resume <run>`. */
export async function applyRunCommand(
  store: Store,
  command: RunCommand,
  runId: string,
  stepId: string | undefined,
  now: number,
): Promise<RunSummary> {
  await requireRun(store, runId);
  return COMMANDS[command](store, runId, stepId ?? '', now);
}

/** `baton resolve <run> <step>`: the step succeeds with the result a person supplies. */
export async function resolveRunStep(
  store: Store,
  runId: string,
  stepId: string,
  result: StepResult,
  now: number,
): Promise<RunSummary> {
  const run = await requireRun(store, runId);
  if (!run.steps.some((step) => step.stepId === stepId)) {
    const known = run.steps.map((step) => step.stepId).join(', ');
    throw new BatonError('STEP_NOT_FOUND', `run ${runId} has no step "${stepId}" (steps: ${known})`);
  }
  return store.resolveStep(runId, stepId, result, now);
}

/**
 * `baton approve|reject <run> <step>`: a person ends a step waiting for approval; its result is
 * `{ approved, by, comment, at }` (`by`: the OS user unless given).
 */
export function decideWait(
  store: Store,
  runId: string,
  stepId: string,
  decision: 'approve' | 'reject',
  answer: { by?: string; comment?: string | null },
  now: number,
): Promise<RunSummary> {
  const made = { by: decidedBy(answer.by), comment: answer.comment?.trim() || null };
  return decision === 'approve'
    ? store.approveStep(runId, stepId, made, now)
    : store.rejectStep(runId, stepId, made, now);
}

/**
 * `baton send <event>`: the event (payload as JSON text) ends the steps waiting for it, in `runId`
 * or every run; the payload is checked against each step's `wait.schema` before anything is
 * stored, and stored with the sender's and the plan's secrets masked.
 */
export function sendEventToWaits(
  store: Store,
  sent: { event: string; dataJson: string; runId?: string },
  secrets: { env: NodeJS.ProcessEnv; secretValues: readonly string[] },
  now: number,
) {
  if (sent.event.trim() === '')
    throw new BatonError('INVALID_ARGUMENT', 'the event name is empty: give the name a step waits for');
  return store.sendEvent(
    {
      event: sent.event,
      dataJson: sent.dataJson,
      ...(sent.runId === undefined ? {} : { runId: sent.runId }),
      checkPayload: payloadCheck(sent.dataJson),
      maskPayload: payloadMask(sent.dataJson, new RunSecretsCache(secrets.env, secrets.secretValues)),
    },
    now,
  );
}
