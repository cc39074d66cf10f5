import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { heartbeatStallMessage } from '../core/stall-message.js';
import { unknownIfUnsafe } from '../core/unsafe-outcome.js';
import { type AttemptResult, attemptLogPath } from '../executors/step-executor.js';
import type { ClaimedStep } from '../store/store.js';
import type { AttemptAbort } from './attempt-abort.js';
import { HeartbeatWatch } from './heartbeat-watch.js';

/**
 * After the deadline, how long a function or model attempt may take to stop (to report what it
 * spent, to finish its log) before it is abandoned. An agent attempt is always waited for: its
 * executor returns once every process of the attempt is stopped (bounded by its kill grace).
 */
const ABANDON_AFTER_MS = 1000;

/** How one attempt ended against its deadline. */
type DeadlineResult =
  | { timedOut: false; result: AttemptResult }
  /**
   * `settled`: what the executor returned after its signal fired, or null when it was abandoned.
   * `stalled`: it was stopped for want of heartbeats (`heartbeatTimeoutMs`), not at its timeout.
   */
  | { timedOut: true; settled: AttemptResult | null; stalled: boolean };

/** What the deadline tells the attempt's runner. */
export interface DeadlineHooks {
  /** The deadline (or the heartbeat watch) stopped the attempt: it may begin no effect. */
  onExpired(): void;
  /** A function with `heartbeatTimeoutMs` went half of it without a heartbeat. */
  onStalling(silentMs: number): void;
  now(): number;
}

/**
 * The one place where an attempt's timeout is enforced, for every kind of step: `execute` gets
 * `attempt`'s signal, which the engine aborts (stop, a lost lease) and this aborts at
 * `claim.step.timeoutMs` (or, for a function with `heartbeatTimeoutMs`, after that long without a
 * heartbeat: `execute`'s `heartbeat`), and the attempt is over then whether or not the executor
 * listens. A late result (or error) of an abandoned executor is discarded. One timer (two with a
 * heartbeat watch) and no race in the common case, where the attempt ends before its deadline.
 */
export function runWithDeadline(
  claim: ClaimedStep,
  attempt: AttemptAbort,
  execute: (signal: AbortSignal, heartbeat: () => void) => Promise<AttemptResult>,
  hooks: DeadlineHooks,
): Promise<DeadlineResult> {
  return new Promise<DeadlineResult>((resolve, reject) => {
    let over = false;
    const stopAttempt = (stalled: boolean) => {
      if (over) return;
      over = true;
      clearTimeout(deadline);
      watch?.stop();
      const after = afterDeadline(claim, attempt, running, hooks.onExpired, stalled);
      after.finally(() => attempt.end()).catch(() => undefined);
      resolve(after);
    };
    const deadline = setTimeout(() => stopAttempt(false), claim.step.timeoutMs);
    const beatsMs = claim.step.kind === 'fn' ? claim.step.heartbeatTimeoutMs : undefined;
    const watch =
      beatsMs === undefined
        ? null
        : new HeartbeatWatch(beatsMs, hooks.now, hooks.onStalling, () => stopAttempt(true));
    const running = execute(attempt.signal, watch ? () => watch.beat() : noBeat);
    running.then(
      (result) => {
        if (over) return;
        over = true;
        clearTimeout(deadline);
        watch?.stop();
        attempt.end();
        resolve({ timedOut: false, result });
      },
      (error: unknown) => {
        if (over) return;
        over = true;
        clearTimeout(deadline);
        watch?.stop();
        attempt.end();
        reject(error);
      },
    );
  });
}

function noBeat(): void {}

/** The deadline passed: the attempt is aborted, then waited for (an agent) or abandoned after a grace. */
async function afterDeadline(
  claim: ClaimedStep,
  attempt: AttemptAbort,
  running: Promise<AttemptResult>,
  onExpired: () => void,
  stalled: boolean,
): Promise<DeadlineResult> {
  onExpired();
  attempt.abort(
    new DOMException(
      stalled && claim.step.heartbeatTimeoutMs !== undefined
        ? heartbeatStallMessage(claim.step.heartbeatTimeoutMs)
        : `the step's timeout of ${claim.step.timeoutMs} ms has passed`,
      'TimeoutError',
    ),
  );
  // Abandoned below or not, a rejection of the executor must not go unhandled.
  const stopped = running.catch(() => null);
  if (claim.step.kind === 'agent') return { timedOut: true, settled: await stopped, stalled };
  let grace: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    grace = setTimeout(() => resolve('late'), ABANDON_AFTER_MS);
  });
  try {
    const settled = await Promise.race([stopped, late]);
    return { timedOut: true, settled: settled === 'late' ? null : settled, stalled };
  } finally {
    clearTimeout(grace);
  }
}

/**
 * What a timed-out (or, `stalled`, heartbeat-starved) attempt counts as: `transient` (retried with backoff, like any timeout), or
 * `unknown_outcome` for a step with an unsafe side effect, which may or may not have happened: a
 * human decides (the rule of core/unsafe-outcome.ts, also applied to interruptions). What the executor reported after its signal fired (usage, its log) is kept.
 */
export function timedOutAttempt(
  claim: ClaimedStep,
  home: string,
  settled: AttemptResult | null,
  stalled = false,
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
      message:
        stalled && step.heartbeatTimeoutMs !== undefined
          ? `${heartbeatStallMessage(step.heartbeatTimeoutMs)}; ${how}`
          : `timed out after ${step.timeoutMs} ms; ${how}`,
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
