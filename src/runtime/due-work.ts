import type { Engine, EngineReport } from '../engine/engine.js';
import type { Store, WaitingStep } from '../store/store.js';
import { everyWaitingToolCall, type RunToolCall } from './run-reads.js';

/**
 * `baton check`'s work, shared with the MCP server's `check`: drive what is due when it starts (and
 * what that makes due without a timer: core/check-horizon.ts; at most SLOT_RUNS_PER_CHECK runs of
 * schedule slots) for at most `maxTimeMs` (unfinished attempts are stopped and retried later), then
 * the runs that need a person: the blocked ones with their reason, and the steps that wait.
 */

/**
 * Drains what is due; after `maxTimeMs` (null: none) the engine stops and aborts what still runs.
 * Its timer fires between the engine's cycles, which return to the event loop.
 */
export async function drainDueWork(engine: Engine, maxTimeMs: number | null): Promise<EngineReport> {
  const timer = maxTimeMs === null ? null : setTimeout(() => engine.stop(0), maxTimeMs);
  timer?.unref();
  try {
    return await engine.run({ kind: 'drain' });
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** How many blocked runs and waiting steps a report names at most (the idle check's too). */
export const NEEDS_A_PERSON_LIMIT = 100;

/**
 * The blocked runs (with their reason), the waiting steps and the tool calls running agents wait on
 * a person for (`agent.approve`), as `reads` (masked) return them.
 */
export async function needsAPerson(reads: Store): Promise<{
  blocked: { id: string; planName: string; reason: string | null; stepIds: string[] }[];
  waiting: WaitingStep[];
  waitingTotal: number;
  toolApprovals: RunToolCall[];
}> {
  const runs = await reads.listRuns({ status: 'blocked', limit: NEEDS_A_PERSON_LIMIT });
  const details = await Promise.all(runs.map((run) => reads.getRun(run.id)));
  const blocked = details.flatMap((run) =>
    run
      ? [
          {
            id: run.id,
            planName: run.planName,
            reason: run.blockedReason,
            stepIds: run.steps.filter((s) => s.status === 'blocked').map((s) => s.stepId),
          },
        ]
      : [],
  );
  const { steps, total } = await reads.listWaitingSteps(NEEDS_A_PERSON_LIMIT);
  const toolApprovals = await everyWaitingToolCall(reads, NEEDS_A_PERSON_LIMIT);
  return { blocked, waiting: steps, waitingTotal: total, toolApprovals };
}
