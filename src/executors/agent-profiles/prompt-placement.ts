import { agentInvocation } from '../../core/agent-prompt.js';
import type { AgentSpec } from '../../core/plan/types.js';

/**
 * Where the CLI's own `--` is: the first one at or after its program (a wrapper's `--`, as in
 * `env -- claude`, is the wrapper's). -1 when there is none.
 */
function cliDoubleDash(command: readonly string[], programIndex = 0): number {
  return command.indexOf('--', programIndex + 1);
}

/** `extra` inserted into `command` before the CLI's own `--` (or at the end): still options. */
export function withOptions(
  command: readonly string[],
  extra: readonly string[],
  programIndex = 0,
): string[] {
  const at = cliDoubleDash(command, programIndex);
  return at === -1 ? [...command, ...extra] : [...command.slice(0, at), ...extra, ...command.slice(at)];
}

/**
 * The prompt after a `--`, for CLIs whose parser ends options there (claude's commander, codex's
 * clap): a variadic flag last in the command (`--allowedTools Bash Read`) can no longer swallow it,
 * and a prompt starting with `-` stays text. A command whose CLI already has `--` gets it last.
 */
export function promptAfterDoubleDash(
  agent: AgentSpec,
  prompt: string,
  programIndex = 0,
): { argv: string[]; stdinText?: string } {
  if (agent.promptVia !== 'arg') return agentInvocation(agent, prompt);
  const separator = cliDoubleDash(agent.command, programIndex) === -1 ? ['--'] : [];
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
  programIndex = 0,
): { argv: string[]; stdinText?: string } {
  if (agent.promptVia !== 'arg') return agentInvocation(agent, prompt);
  const argv = agent.command.filter((arg, i) => {
    const next = agent.command[i + 1];
    return !(i > programIndex && flags.includes(arg) && (next === undefined || next.startsWith('-')));
  });
  const long = flags.find((flag) => flag.startsWith('--')) ?? flags[0]!;
  // Before the CLI's own `--`, if any: after it, the flag would be a positional.
  return { argv: withOptions(argv, [`${long}=${prompt}`], programIndex) };
}
