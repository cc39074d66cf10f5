import type { Command } from 'commander';
import { type Act, json } from './program-options.js';

/** A person's commands on a run that needs them: retry, skip, resolve, resume, cancel. */
export function registerActionCommands(program: Command, act: Act): void {
  withBulkOptions(
    program
      .command('retry [run] [step]')
      .description(
        'run a blocked (or waiting) step again now, with fresh tries; --blocked: every blocked step the filters choose',
      )
      .option('--blocked', 'retry every blocked step the filters choose (all of them without filters)'),
  ).action(
    act(async () => {
      const { bulkOrOne } = await import('./commands/run-actions.js');
      return (runId: string | undefined, stepId: string | undefined, options: object) =>
        bulkOrOne('retry', runId, stepId, options);
    }),
  );
  program
    .command('skip <run> <step>')
    .description('mark a step skipped so the steps after it can go on')
    .addOption(json())
    .action(
      act(async () => {
        const { manageCommand } = await import('./commands/run-actions.js');
        return (runId: string, stepId: string, options: object) =>
          manageCommand('skip', runId, stepId, options);
      }),
    );
  program
    .command('resolve <run> <step>')
    .description(
      'supply the outcome of a blocked step (e.g. an unsafe step interrupted mid-effect); it succeeds with it',
    )
    .requiredOption(
      '--result <file|json>',
      "the step's result: a JSON value, or a file holding JSON (or plain text; a regular UTF-8 file); at most 1 MiB, the payload limit",
    )
    .addOption(json())
    .action(act(async () => (await import('./commands/resolve.js')).resolveCommand));
  program
    .command('resume <run>')
    .description('give a run stopped by its maxSteps budget as many attempts again, and go on')
    .addOption(json())
    .action(
      act(async () => {
        const { manageCommand } = await import('./commands/run-actions.js');
        return (runId: string, options: object) => manageCommand('resume', runId, undefined, options);
      }),
    );
  withBulkOptions(
    program
      .command('cancel [run]')
      .description(
        'cancel a run: no step of it starts again; running agents are stopped; its cleanup (compensate:, finally:) runs before it is cancelled. Without a run: every unfinished run the filters choose',
      )
      .option('--blocked', 'only runs that are blocked')
      .option(
        '--compensate',
        'run the compensate: of every step that completed, in reverse order, once (default: only when the plan says onFailure: compensate); finally: steps run either way',
      )
      .option('--no-compensate', 'run no compensate:, even when the plan says onFailure: compensate'),
  ).action(
    act(async () => {
      const { bulkOrOne } = await import('./commands/run-actions.js');
      return (runId: string | undefined, options: object) => bulkOrOne('cancel', runId, undefined, options);
    }),
  );
}

/** The filters of `retry --blocked` and `cancel` without a run, and what they print. */
function withBulkOptions(command: Command): Command {
  return command
    .option('--class <class>', 'only steps blocked with this failure class (transient, fatal, invalid, ...)')
    .option(
      '--since <duration>',
      'only steps blocked (runs created, for cancel without --blocked) within this long, e.g. 2h',
    )
    .option('--plan <name>', 'only runs of this plan')
    .option('-l, --label <key=value...>', 'only runs with this label, repeatable (all must match)')
    .option('--dry-run', 'list what it would touch and change nothing')
    .addOption(json());
}
