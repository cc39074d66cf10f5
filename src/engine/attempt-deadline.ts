import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { unknownIfUnsafe } from '../core/unsafe-outcome.js';
import { type AttemptResult, attemptLogPath } from '../executors/step-executor.js';
import type { ClaimedStep } from '../store/store.js';
import type { AttemptAbort } from './attempt-abort.js';

/**
 * After the deadline, how long a function or model attempt may take to stop (to report what it
 * spent, to finish its log) before it is abandoned. An agent attempt is always waited for: its
 * executor returns once every process of the attempt is stopped (bounded by its kill grace).
 */
const ABANDON_AFTER_MS = 1000;

/** How one attempt ended against its deadline. */
type DeadlineResult =
  | { timedOut: false; result: AttemptResult }
  /** `settled`: what the executor returned after its signal fired, or null when it was abandoned. */
  | { timedOut: true; settled: AttemptResult | null };

/**
 * The one place where an attempt's timeout is enforced, for every kind of step: `execute` gets
 * `attempt`'s signal, which the engine aborts (stop, a lost lease) and this aborts at
 * `claim.step.timeoutMs`, and the attempt is over at the deadline whether or not the executor
 * listens. A late result (or error) of an abandoned executor is discarded. `onExpired` is called
 * when the deadline passes. One timer and no race in the common case, where the attempt ends
 * before its deadline.
 */
export function runWithDeadline(
  claim: ClaimedStep,
  attempt: AttemptAbort,
  execute: (signal: AbortSignal) => Promise<AttemptResult>,
  onExpired: () => void,
): Promise<DeadlineResult> {
  const running = execute(attempt.signal);
  return new Promise<DeadlineResult>((resolve, reject) => {
    let over = false;
    const deadline = setTimeout(() => {
      over = true;
      const after = afterDeadline(claim, attempt, running, onExpired);
      after.finally(() => attempt.end()).catch(() => undefined);
      resolve(after);
    }, claim.step.timeoutMs);
    running.then(
      (result) => {
        if (over) return;
        clearTimeout(deadline);
        attempt.end();
        resolve({ timedOut: false, result });
      },
      (error: unknown) => {
        if (over) return;
        clearTimeout(deadline);
        attempt.end();
        reject(error);
      },
    );
  });
}

/** The deadline passed: the attempt is aborted, then waited for (an agent) or abandoned after a grace. */
async function afterDeadline(
  claim: ClaimedStep,
  attempt: AttemptAbort,
  running: Promise<AttemptResult>,
  onExpired: () => void,
): Promise<DeadlineResult> {
  onExpired();
  attempt.abort(
    new DOMException(`the step's timeout of ${claim.step.timeoutMs} ms has passed`, 'TimeoutError'),
  );
  // Abandoned below or not, a rejection of the executor must not go unhandled.
  const stopped = running.catch(() => null);
  if (claim.step.kind === 'agent') return { timedOut: true, settled: await stopped };
  let grace: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    grace = setTimeout(() => resolve('late'), ABANDON_AFTER_MS);
  });
  try {
    const settled = await Promise.race([stopped, late]);
    return { timedOut: true, settled: settled === 'late' ? null : settled };
  } finally {
    clearTimeout(grace);
  }
}

/**
 * What a timed-out attempt counts as: `transient` (retried with backoff, like any timeout), or
 * `unknown_outcome` for a step with an unsafe side effect, which may or may not have happened: a
 * human decides (the rule of core/unsafe-outcome.ts, also applied to interruptions). What the executor reported after its signal fired (usage, its log) is kept.
 */
export function timedOutAttempt(
  claim: ClaimedStep,
  home: string,
  settled: AttemptResult | null,
): AttemptResult {
  const { step } = claim;
  const how =
    step.kind === 'agent'
      ? 'every process of the attempt was stopped'
      : settled
        ? 'it was stopped through its signal'
        : 'it did not stop when its signal fired: abandoned, a late result is discarded';
  const usage = settled?.outcome.usage ? { usage: settled.outcome.usage } : {};
  const outcome = unknownIfUnsafe(
    {
      ok: false,
      failureClass: 'transient',
      message: `timed out after ${step.timeoutMs} ms; ${how}`,
      ...usage,
    },
    step.sideEffect,
    claim,
  );
  // An abandoned function may have written to its log: `baton logs` shows it.
  const logPath = settled
    ? settled.logPath
    : existsSync(join(home, attemptLogPath(claim)))
      ? attemptLogPath(claim)
      : null;
  return { outcome, logPath };
}
