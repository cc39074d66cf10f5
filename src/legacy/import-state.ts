import { basename, dirname, resolve } from 'node:path';
import { validatePlanObject } from '../core/plan/parse.js';
import type { Plan } from '../core/plan/types.js';
import type { LegacyConfig } from './legacy-config.js';
import { legacyOutputs } from './legacy-outputs.js';
import { type LegacyState, requiredOutputsOf } from './state-file.js';

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
  const workspace = dirname(resolve(statePath));
  // STEP_MAX_RETRIES=0 is one try, as in the skill.
  const maxAttempts = Math.max(1, config.maxRetries);
  const plan = validatePlanObject(
    {
      name: `imported-${folder}`,
      description: `Imported from ${resolve(statePath)}`,
      defaults: {
        agent: { command: config.agentArgv, ...(config.exitCodes ? { exitCodes: config.exitCodes } : {}) },
        retry: {
          maxAttempts,
          maxInterruptions: config.maxInterruptions,
          initialDelayMs: 0,
          maxDelayMs: Math.max(delayMs, 0),
        },
      },
      limits: { maxSteps: Math.max(50, state.stepQueue.length * maxAttempts) },
      steps: state.stepQueue.map((id, index) => {
        const definition = state.plan.steps[id]!;
        // Both spellings, an absolute path inside the workspace made relative (as the check reads them).
        const requiredOutputs = legacyOutputs(workspace, requiredOutputsOf(definition)).map((o) => o.path);
        return {
          id,
          title: definition.title ?? id,
          instruction: definition.instruction,
          ...(requiredOutputs.length > 0 ? { requiredOutputs } : {}),
          ...(index > 0 ? { dependsOn: [state.stepQueue[index - 1]!] } : {}),
          ...(index > 0 && delayMs > 0 ? { delayBeforeMs: delayMs } : {}),
        };
      }),
    },
    statePath,
  );
  const completedSteps = state.stepQueue.filter((id) => state.stepRuns[id]?.status === 'DONE');
  return { plan, completedSteps, workspace };
}
