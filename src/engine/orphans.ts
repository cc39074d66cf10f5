import { attemptMarker, carriesMarker, signalMarkedProcesses } from '../executors/attempt-processes.js';
import { killProcessGroup } from '../executors/run-process.js';
import type { ReclaimedAttempt } from '../store/store.js';

/**
 * When a worker is SIGKILLed its agent lives on (Node cannot ask the kernel to kill children with
 * their parent), and so do the processes the agent started, in its group or in groups of their own.
 * Whoever reclaims the lease stops every process on its host that carries the attempt's
 * marker (its BATON_* variables), so the retried attempt does not run beside them. A pid is only
 * trusted through its environment: a reused pid belongs to someone else and is left alone.
 */
export function stopOrphanedAttempt(attempt: ReclaimedAttempt, thisHost: string, storeId?: string): boolean {
  // The marker names one attempt of one run: whatever carries it here is that attempt's, even when
  // its worker ran elsewhere or died before it recorded the agent's pid.
  const marker = attemptMarker(attempt.runId, attempt.stepId, attempt.attempt, storeId);
  // Asked before anything is killed: a killed agent's environment reads empty.
  const agentIsOurs =
    attempt.host === thisHost &&
    attempt.pid !== null &&
    attempt.pid > 1 &&
    carriesMarker(attempt.pid, marker);
  let stopped = signalMarkedProcesses(marker, 'SIGKILL').length > 0;
  if (agentIsOurs) {
    try {
      // Its group too: what cleared its environment but stayed in the agent's group.
      stopped = killProcessGroup(attempt.pid!, 'SIGKILL') || stopped;
    } catch {}
  }
  return stopped;
}
