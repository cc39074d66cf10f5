import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { planIndex } from '../core/run-state.js';
import { attemptLogPath } from '../executors/step-executor.js';
import type { RunWithSteps } from '../store/store.js';

/**
 * When each running agent step of `run` last printed something: the modification time of its
 * attempt's log, which the worker appends every chunk of the agent's output to (for `baton status`,
 * beside the stall watchdog of `agent.stallTimeoutMs`). Only a log on this machine is seen: a step
 * run by a worker elsewhere (PostgreSQL) is not in the map.
 */
export async function lastOutputTimes(home: string, run: RunWithSteps): Promise<Map<string, number>> {
  const times = new Map<string, number>();
  const running = run.steps.filter((step) => step.status === 'running' && step.attempt > 0);
  if (running.length === 0) return times;
  const { position } = planIndex(run.plan);
  await Promise.all(
    running.map(async (step) => {
      if (run.plan.steps[position.get(step.stepId) ?? -1]?.kind !== 'agent') return;
      const log = join(home, attemptLogPath({ runId: run.id, stepId: step.stepId, attempt: step.attempt }));
      try {
        times.set(step.stepId, (await stat(log)).mtimeMs);
      } catch {
        // Not started writing yet, or run elsewhere.
      }
    }),
  );
  return times;
}

/** How long ago, as `status` says it: `42s`, `5m`, `2h`. */
export function agoText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  return `${Math.floor(s / 3600)}h`;
}
