import { BatonError } from '../core/errors.js';
import { planSecretEnv, runSecrets } from '../core/run-secrets.js';
import { attemptLogFile, readLogTail } from './attempt-logs.js';
import type { CommandContext } from './commands/context.js';
import { requireRun, requireStepOf } from './run-reads.js';

/**
 * The end of one attempt's output, as the MCP server's `step_log` reads it: the attempt (the step's
 * last unless given) with its outcome, and the end of its log file masked with the secrets of the
 * process and of the run's plan (a hook's urlEnv, an apiKeyEnv); an attempt without a log file
 * answers its summary or message. The run and its attempts are read through the masking boundary.
 */

export interface StepLogRequest {
  runId: string;
  stepId: string;
  /** Which attempt; default the step's last. */
  attempt?: number;
  /** The end of the log, at most this many bytes. */
  maxBytes: number;
}

export interface StepLog {
  runId: string;
  stepId: string;
  /** null: the step has not started an attempt. */
  attempt: number | null;
  outcome?: string;
  failureClass?: string | null;
  message?: string | null;
  text: string;
  /** The log is longer than what `text` holds. */
  truncated: boolean;
  /** The log file's size in bytes (0: none). */
  bytes: number;
}

export async function readStepLog(ctx: CommandContext, request: StepLogRequest): Promise<StepLog> {
  const { runId, stepId } = request;
  const run = await requireRun(ctx.store, runId);
  requireStepOf(run, stepId);
  const step = run.steps.find((s) => s.stepId === stepId)!;
  const attempts = await ctx.store.getAttempts(runId, stepId);
  const wanted = request.attempt ?? step.attempt;
  if (wanted === 0) return { runId, stepId, attempt: null, text: '', truncated: false, bytes: 0 };
  const record = attempts.find((a) => a.attempt === wanted);
  const file = attemptLogFile(ctx.home, run, stepId, wanted, attempts);
  if (!record && file === null)
    throw new BatonError(
      'INVALID_ARGUMENT',
      `step ${stepId} has no attempt ${wanted} (attempts: ${attempts.map((a) => a.attempt).join(', ') || 'none'})`,
    );
  const secrets = runSecrets({ env: ctx.env, values: ctx.secretValues, plan: planSecretEnv(run.plan) });
  const tail =
    file === null
      ? { text: record?.summary ?? record?.message ?? '', truncated: false, size: 0 }
      : await readLogTail(file, secrets, request.maxBytes);
  return {
    runId,
    stepId,
    attempt: wanted,
    outcome: record?.outcome ?? 'running',
    failureClass: record?.failureClass ?? null,
    message: record?.message ?? null,
    text: tail.text,
    truncated: tail.truncated,
    bytes: tail.size,
  };
}
