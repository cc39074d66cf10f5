import type { AgentSpec } from '../core/plan/types.js';
import { toolApprovalsRefusal } from './agent-attempt.js';
import { chooseProfile } from './agent-profiles/choose-profile.js';
import { hasFlag } from './agent-profiles/prompt-placement.js';
import { checkAgentCommand } from './command-policy.js';
import type { TrustedPrograms } from './trusted-programs.js';

/**
 * Why a step's `agent.approve` cannot work, or null: its CLI offers no hook that asks before a tool
 * runs, the command already sets that hook itself, or the agent runs confined (its permission tool
 * must reach the Baton home, which a sandbox hides). Checked before a run is stored.
 */
export function toolApprovalsProblem(
  agent: AgentSpec,
  confined: boolean,
  workspace: string,
  trust: TrustedPrograms,
): string | null {
  if (!agent.approve) return null;
  const verdict = checkAgentCommand(agent.command, { cwd: workspace, trust });
  const profile = chooseProfile(agent, verdict.ok ? verdict.programIndex : 0);
  if (!profile.toolApprovals) return toolApprovalsRefusal(profile.name);
  const own = profile.toolApprovals.ownFlags.find((flag) => hasFlag(agent.command, flag));
  if (own !== undefined)
    return `Baton serves ${own} itself for the rules it lists: remove ${own} from the command`;
  if (confined)
    return 'with sandbox: workspace it is not supported yet (the permission tool must reach the Baton home, which the sandbox hides): approve between steps with a wait step, or run this step unconfined';
  return null;
}
