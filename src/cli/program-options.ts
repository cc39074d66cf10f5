import { type Command, Option } from 'commander';

/**
 * Wraps a command's action: `load` imports the command's module when the command runs (so a
 * command loads only what it uses) and returns the function that answers it with an exit code.
 */
export type Act = <A extends unknown[]>(
  load: () => Promise<(...args: A) => Promise<number>>,
) => (...args: A) => Promise<void>;

export const json = () => new Option('--json', 'print JSON instead of text');
export const agent = () =>
  new Option(
    '--agent <argv-json>',
    'agent for steps whose plan sets none, as a JSON array (env BATON_AGENT_CMD)',
  );
export const concurrency = () =>
  new Option('--concurrency <n>', 'steps running at once in this process (env BATON_CONCURRENCY, default 8)');
export const lease = () =>
  new Option(
    '--lease <duration>',
    'lease length; an attempt whose worker stops renewing is retried after it (default 30s)',
  );

export const allowWorkspace = () =>
  new Option(
    '--allow-workspace <dir>',
    'let this folder be the workspace although it is the root, your home folder or above the Baton home',
  );

/** The options of every command that stores a run of a plan file (run, propose). */
export function withPlanOptions(command: Command): Command {
  return command
    .option('-i, --input <name=value...>', 'a plan input, repeatable')
    .option(
      '-l, --label <key=value...>',
      'a label of the run, repeatable (e.g. -l team=growth): find and act on runs by it (status --label, retry --blocked --label)',
    )
    .option(
      '--workspace <dir>',
      "folder the agents work in (default: the plan's workspace, else the plan file's folder)",
    )
    .addOption(allowWorkspace())
    .option('--id <run-id>', 'use this run id instead of a generated one')
    .option(
      '--priority <0-9>',
      "claim priority of the run's steps, higher first (default: the plan's priority, else 0); a step's own priority wins",
    )
    .option(
      '--shadow',
      'shadow run: steps with a sideEffect are not executed, nor is any ctx.effect; what they would do is recorded (step.would_execute)',
    )
    .addOption(agent());
}

/** The help text on colours of the commands that print tables. */
export const colours = `
Colours: on a terminal only, never with --json or in a pipe; NO_COLOR=1 turns them off,
FORCE_COLOR=1 on (in a pipe too; NO_COLOR wins). Tables are aligned by display width (CJK
characters and emoji take two columns).`;
