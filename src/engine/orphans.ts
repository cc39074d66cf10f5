import { readFileSync } from 'node:fs';
import { killProcessGroup } from '../executors/run-process.js';
import type { ReclaimedAttempt } from '../store/store.js';

/**
 * When a worker is SIGKILLed its agent process lives on (Node cannot ask the kernel to kill
 * children with their parent). Whoever reclaims the lease stops that orphan, so the retried attempt
 * does not run beside it. The pid is only trusted if it is on this host and its environment names
 * this very attempt: a reused pid belongs to someone else and is left alone.
 */
export function stopOrphanedAttempt(attempt: ReclaimedAttempt, thisHost: string): boolean {
  if (attempt.pid === null || attempt.pid <= 1 || attempt.host !== thisHost) return false;
  let environ: string;
  try {
    environ = readFileSync(`/proc/${attempt.pid}/environ`, 'utf8');
  } catch {
    return false;
  }
  const vars = new Set(environ.split('\u0000'));
  const ours =
    vars.has(`BATON_RUN_ID=${attempt.runId}`) &&
    vars.has(`BATON_STEP_ID=${attempt.stepId}`) &&
    vars.has(`BATON_ATTEMPT=${attempt.attempt}`);
  if (!ours) return false;
  try {
    return killProcessGroup(attempt.pid, 'SIGKILL');
  } catch {
    return false;
  }
}
