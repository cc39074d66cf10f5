import { applyRunCommand, type RunCommand } from '../../runtime/commands/run-commands.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

/**
 * The write commands on a stored run: `baton retry|skip <run> <step>` and
 * `baton cancel|resume <run>` (the read commands are in read.ts).
 */
type Command = RunCommand;

const DONE: Record<Command, string> = {
  retry: 'step {step} will run again',
  skip: 'step {step} skipped',
  cancel: 'run {run} cancelled',
  resume: 'run {run} resumed with a raised budget',
};

/** `baton retry|skip <run> <step>`, `baton cancel|resume <run>`: one transaction each. */
export async function manageCommand(
  command: Command,
  runId: string,
  stepId: string | undefined,
  options: GlobalOptions,
): Promise<number> {
  return withCommandContext(options, async (ctx) => {
    const summary = await applyRunCommand(ctx, {
      command,
      runId,
      ...(stepId === undefined ? {} : { stepId }),
    });
    const done = DONE[command];
    if (options.json) printJson(summary);
    else {
      const what = done.replace('{step}', stepId ?? '').replace('{run}', runId);
      const next = summary.status === 'running' ? ' (baton check or baton worker drives it)' : '';
      process.stdout.write(`${what}; run is ${summary.status}${next}\n`);
    }
    return EXIT.ok;
  });
}
