import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { unknownIfUnsafe } from '../core/unsafe-outcome.js';
import { type AttemptResult, attemptLogPath } from '../executors/step-executor.js';
import type { ClaimedStep } from '../store/store.js';

/**
 * After the deadline, how long a function or model attempt may take to stop (to report what it
 * spent, to finish its log) before it is abandoned. An agent attempt is always waited for: its
 * executor returns once every process of the attempt is stopped (bounded by its kill grace).
 */
const ABANDON_AFTER_MS = 1000;

/** How one attempt ended against its deadline. */
export type DeadlineResult =
  | { timedOut: false; result: AttemptResult }
  /** `settled`: what the executor returned after its signal fired, or null when it was abandoned. */
  | { timedOut: true; settled: AttemptResult | null };

/**
 * The one place where an attempt's timeout is enforced, for every kind of step: `execute` gets a
 * signal that also fires at `claim.step.timeoutMs`, and the attempt is over at the deadline whether
 * or not the executor listens. A late result (or error) of an abandoned executor is discarded.
 * `onExpired` is called when the deadline passes.
 */
export async function runWithDeadline(
  claim: ClaimedStep,
  outer: AbortSignal,
  execute: (signal: AbortSignal) => Promise<AttemptResult>,
  onExpired: () => void,
): Promise<DeadlineResult> {
  // One controller that `outer` is forwarded to, rather than AbortSignal.any: on Node 20 each
  // composed signal is held through WeakRefs and a FinalizationRegistry, which kept every attempt's
  // signals alive past the scavenges of a busy worker and grew its heap (bench/README.md, issue 20).
  const deadline = new AbortController();
  const forward = () => deadline.abort(outer.reason);
  if (outer.aborted) forward();
  else outer.addEventListener('abort', forward, { once: true });
  const signal = deadline.signal;
  const timers: NodeJS.Timeout[] = [];
  const after = (ms: number) =>
    new Promise<'late'>((resolve) => timers.push(setTimeout(() => resolve('late'), ms)));
  const running = execute(signal);
  try {
    const first = await Promise.race([running, after(claim.step.timeoutMs)]);
    if (first !== 'late') return { timedOut: false, result: first };
    onExpired();
    deadline.abort(
      new DOMException(`the step's timeout of ${claim.step.timeoutMs} ms has passed`, 'TimeoutError'),
    );
    // Abandoned below or not, a rejection of the executor must not go unhandled.
    const stopped = running.catch(() => null);
    if (claim.step.kind === 'agent') return { timedOut: true, settled: await stopped };
    const settled = await Promise.race([stopped, after(ABANDON_AFTER_MS)]);
    return { timedOut: true, settled: settled === 'late' ? null : settled };
  } finally {
    outer.removeEventListener('abort', forward);
    for (const timer of timers) clearTimeout(timer);
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
