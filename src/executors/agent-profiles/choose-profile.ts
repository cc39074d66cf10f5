import type { AgentProfileName } from '../../core/plan/types.js';
import { aiderProfile } from './aider.js';
import { claudeProfile } from './claude.js';
import { codexProfile } from './codex.js';
import { geminiProfile } from './gemini.js';
import { genericProfile } from './generic.js';
import { openclawProfile } from './openclaw.js';
import { opencodeProfile } from './opencode.js';
import type { AgentProfile } from './types.js';

export const AGENT_PROFILES: Readonly<Record<AgentProfileName, AgentProfile>> = {
  claude: claudeProfile,
  codex: codexProfile,
  gemini: geminiProfile,
  openclaw: openclawProfile,
  opencode: opencodeProfile,
  aider: aiderProfile,
  generic: genericProfile,
};

/** Programs that run a script: the script's name says which CLI it is (`node …/gemini.js`). */
const SCRIPT_RUNNERS: ReadonlySet<string> = new Set(['node', 'nodejs', 'bun', 'deno', 'npx', 'bunx', 'pnpx']);

/** `/usr/local/bin/claude` → `claude`; `gemini.js`, `claude.exe`, `codex-1.2` → the CLI's name. */
function cliName(program: string): string {
  const base = (program.split(/[\\/]/).pop() ?? program).toLowerCase();
  return base.replace(/\.(exe|cmd|bat|js|mjs|cjs)$/, '').replace(/[-@]?\d+(\.\d+)*$/, '');
}

/**
 * The profile of an agent command: the plan's `profile` when it names one, else the one whose
 * program is the command's program (`programIndex`: past wrappers such as `timeout 600`; for
 * `node script.js` and `npx name`, the script), else `generic`.
 */
export function chooseProfile(
  agent: { command: readonly string[]; profile?: AgentProfileName | undefined },
  programIndex = 0,
): AgentProfile {
  if (agent.profile !== undefined) return AGENT_PROFILES[agent.profile];
  let name = cliName(agent.command[programIndex] ?? '');
  if (SCRIPT_RUNNERS.has(name)) {
    const script = agent.command.slice(programIndex + 1).find((arg) => !arg.startsWith('-'));
    if (script !== undefined) name = cliName(script.replace(/^@[^/]+\//, ''));
  }
  for (const profile of Object.values(AGENT_PROFILES)) {
    if (profile.programs.includes(name)) return profile;
  }
  // npm package names: @anthropic-ai/claude-code, @openai/codex, @google/gemini-cli.
  if (name === 'claude-code') return claudeProfile;
  if (name === 'gemini-cli') return geminiProfile;
  return genericProfile;
}
