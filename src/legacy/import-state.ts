import { basename, dirname, resolve } from 'node:path';
import { validatePlanObject } from '../core/plan/parse.js';
import type { Plan } from '../core/plan/types.js';
import type { LegacyConfig } from './legacy-config.js';
import type { LegacyState } from './state-file.js';

/**
 * Turns a skill state file into a native plan: the queue becomes a chain of steps, the skill's
 * retry cap and step delay become the plan's retry policy and delays, STEP_AGENT_CMD the agent,
 * and steps already DONE start succeeded.
 */
export function planFromLegacyState(
  state: LegacyState,
  statePath: string,
  config: LegacyConfig,
): { plan: Plan; completedSteps: string[]; workspace: string } {
  const folder =
    basename(dirname(resolve(statePath)))
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .slice(0, 80) || 'state';
  const delayMs = Math.round(state.stepDelayMinutes * 60_000);
  const plan = validatePlanObject(
    {
      name: `imported-${folder}`,
      description: `Imported from ${resolve(statePath)}`,
      defaults: {
        agent: { command: config.agentArgv },
        retry: {
          maxAttempts: config.maxRetries,
          maxInterruptions: config.maxInterruptions,
          initialDelayMs: 0,
          maxDelayMs: Math.max(delayMs, 0),
        },
      },
      limits: { maxSteps: Math.max(50, state.stepQueue.length * config.maxRetries) },
      steps: state.stepQueue.map((id, index) => {
        const definition = state.plan.steps[id]!;
        return {
          id,
          title: definition.title ?? id,
          instruction: definition.instruction,
          ...(definition.requiredOutputs ? { requiredOutputs: definition.requiredOutputs } : {}),
          ...(index > 0 ? { dependsOn: [state.stepQueue[index - 1]!] } : {}),
          ...(index > 0 && delayMs > 0 ? { delayBeforeMs: delayMs } : {}),
        };
      }),
    },
    statePath,
  );
  const completedSteps = state.stepQueue.filter((id) => state.stepRuns[id]?.status === 'DONE');
  return { plan, completedSteps, workspace: dirname(resolve(statePath)) };
}
