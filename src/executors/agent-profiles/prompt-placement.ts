import { agentInvocation } from '../../core/agent-prompt.js';
import type { AgentSpec } from '../../core/plan/types.js';

/**
 * The prompt after a `--`, for CLIs whose parser ends options there (claude's commander, codex's
 * clap): a variadic flag last in the command (`--allowedTools Bash Read`) can no longer swallow it,
 * and a prompt starting with `-` stays text. A command that already has `--` gets the prompt last.
 */
export function promptAfterDoubleDash(
  agent: AgentSpec,
  prompt: string,
): { argv: string[]; stdinText?: string } {
  if (agent.promptVia !== 'arg') return agentInvocation(agent, prompt);
  const separator = agent.command.includes('--') ? [] : ['--'];
  return { argv: [...agent.command, ...separator, prompt] };
}

/** Whether `command` has `flag` as an element, or as `flag=value`. */
export function hasFlag(command: readonly string[], ...flags: string[]): boolean {
  return command.some((arg) => flags.some((flag) => arg === flag || arg.startsWith(`${flag}=`)));
}

/** The value of the last `flag value` or `flag=value` in `command`. */
export function flagValue(command: readonly string[], ...flags: string[]): string | undefined {
  let value: string | undefined;
  command.forEach((arg, i) => {
    for (const flag of flags) {
      if (arg === flag && i + 1 < command.length) value = command[i + 1];
      else if (arg.startsWith(`${flag}=`)) value = arg.slice(flag.length + 1);
    }
  });
  return value;
}

/**
 * The prompt as one `<long>=<text>` element (yargs and commander keep it one value whatever the
 * text, where a bare flag followed by a prompt starting with `-` reads as two flags, and array
 * flags swallow positionals). A bare `flags` element at the end, waiting for the prompt, is dropped.
 */
export function promptAsFlagValue(
  agent: AgentSpec,
  prompt: string,
  flags: readonly string[],
): { argv: string[]; stdinText?: string } {
  if (agent.promptVia !== 'arg') return agentInvocation(agent, prompt);
  const argv = agent.command.filter((arg, i) => {
    const next = agent.command[i + 1];
    return !(flags.includes(arg) && (next === undefined || next.startsWith('-')));
  });
  const long = flags.find((flag) => flag.startsWith('--')) ?? flags[0]!;
  return { argv: [...argv, `${long}=${prompt}`] };
}
