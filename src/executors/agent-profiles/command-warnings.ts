import type { AgentSpec, Plan } from '../../core/plan/types.js';
import { CLI_RETRIES } from '../agent-retry-cap.js';
import { checkAgentCommand } from '../command-policy.js';
import { readTextFile } from '../config-files.js';
import { chooseProfile } from './choose-profile.js';

interface AgentCommandWarning {
  /** Where the command is: `steps.research.agent` (the first step that uses it). */
  where: string;
  /** The profile that reads the command's output. */
  profile: string;
  message: string;
}

/**
 * What a plan's agent commands lack for Baton to read their CLI's output (its machine-readable
 * flag, its non-interactive mode), and the retry setting the user must make themselves where Baton
 * cannot cap the CLI's retries (openclaw): once per distinct command, at the first step that uses
 * it. The profile is chosen as the executor chooses it, so `[node, …/openclaw.mjs, agent, exec]` is
 * openclaw as much as `[openclaw, agent, exec]` is.
 */
export function agentCommandWarnings(
  plan: Plan,
  workspace: string,
  env: NodeJS.ProcessEnv = process.env,
): AgentCommandWarning[] {
  const seen = new Set<string>();
  const warnings: AgentCommandWarning[] = [];
  const look = (agent: AgentSpec | undefined, where: string) => {
    if (agent === undefined) return;
    const key = JSON.stringify([agent.command, agent.profile ?? null, agent.capRetries ?? true]);
    if (seen.has(key)) return;
    seen.add(key);
    const verdict = checkAgentCommand(agent.command, { cwd: workspace });
    if (!verdict.ok) return; // refused commands are reported as errors elsewhere
    const profile = chooseProfile(agent, verdict.programIndex);
    const command = agent.command.slice(verdict.programIndex);
    for (const message of profile.commandWarnings(command))
      warnings.push({ where, profile: profile.name, message });
    if (agent.capRetries === false) return;
    const reminder = profile.retryCap?.(command, CLI_RETRIES, { env, readTextFile, workspace }).reminder;
    if (reminder !== undefined) warnings.push({ where, profile: profile.name, message: reminder });
  };
  for (const step of plan.steps) {
    look(step.agent, `steps.${step.id}.agent`);
    look(step.fallback?.agent, `steps.${step.id}.fallback.agent`);
  }
  return warnings;
}
