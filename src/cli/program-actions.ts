import type { Command } from 'commander';
import { type Act, json } from './program-options.js';

/** A person's commands on a run that needs them: retry, skip, resolve, resume, cancel. */
export function registerActionCommands(program: Command, act: Act): void {
  for (const [name, description] of [
    ['retry', 'run a blocked (or waiting) step again now, with fresh tries'],
    ['skip', 'mark a step skipped so the steps after it can go on'],
  ] as const) {
    program
      .command(`${name} <run> <step>`)
      .description(description)
      .addOption(json())
      .action(
        act(async () => {
          const { manageCommand } = await import('./commands/run-actions.js');
          return (runId: string, stepId: string, options: object) =>
            manageCommand(name, runId, stepId, options);
        }),
      );
  }
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
  for (const [name, description] of [
    ['resume', 'give a run stopped by its maxSteps budget as many attempts again, and go on'],
    ['cancel', 'cancel a run: no step of it starts again; running agents are stopped'],
  ] as const) {
    program
      .command(`${name} <run>`)
      .description(description)
      .addOption(json())
      .action(
        act(async () => {
          const { manageCommand } = await import('./commands/run-actions.js');
          return (runId: string, options: object) => manageCommand(name, runId, undefined, options);
        }),
      );
  }
}
