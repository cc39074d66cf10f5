import type { AgentProfileName } from '../../core/plan/types.js';
import { programKeys } from '../command-policy-rules.js';
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

/**
 * The names a program goes by, as the command policy reads them (`/usr/local/bin/claude-2.1` →
 * `claude-2.1`, `claude`), after a script's extension (`gemini.js`) and a package scope
 * (`@openai/codex`).
 */
function cliNames(program: string): string[] {
  return programKeys(program.replace(/^@[^/]+\//, '').replace(/\.(js|mjs|cjs|cmd|bat)$/i, ''));
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
  let names = cliNames(agent.command[programIndex] ?? '');
  if (names.some((name) => SCRIPT_RUNNERS.has(name))) {
    const script = agent.command.slice(programIndex + 1).find((arg) => !arg.startsWith('-'));
    if (script !== undefined) names = cliNames(script);
  }
  const profile = Object.values(AGENT_PROFILES).find((p) => names.some((name) => p.programs.includes(name)));
  if (profile) return profile;
  // npm package names: @anthropic-ai/claude-code, @openai/codex, @google/gemini-cli.
  if (names.includes('claude-code')) return claudeProfile;
  if (names.includes('gemini-cli')) return geminiProfile;
  return genericProfile;
}
