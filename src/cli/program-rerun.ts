import type { Command } from 'commander';
import { type Act, agent, allowWorkspace, json } from './program-options.js';

/** Doing part of a run over: `baton rerun` (the same run) and `baton fork` (a new run). */
export function registerRerunCommands(program: Command, act: Act): void {
  program
    .command('rerun <run>')
    .description(
      'run a step again, and every step that depends on it, with fresh tries; the other steps keep their results',
    )
    .requiredOption('--from <step>', 'the step to run again')
    .option(
      '--only',
      'run that step alone: the steps after it keep their results, marked stale in baton status',
    )
    .option(
      '--redo-effects',
      'forget the effects (ctx.effect) the rerun steps recorded, so they happen again; needed for unsafe steps',
    )
    .option('--by <name>', 'who asks, recorded on the timeline (default: the OS user)')
    .addOption(json())
    .addHelpText(
      'after',
      `
Works on a run that succeeded, is blocked or is still running (a running step of the rerun is
stopped first, and starts again once its old attempt ended). Earlier attempts stay in the history;
attempt numbers continue. A cancelled run is never rerun: fork it (baton fork). Nothing runs until
baton check or baton worker drives the run.

Example:
  baton rerun daily-20261012 --from analyze     # analyze, then report and send, run again
  baton check`,
    )
    .action(act(async () => (await import('./commands/rerun.js')).rerunCommand));
  program
    .command('fork <run>')
    .description(
      'start a new run from an old one: it keeps the results of the steps that do not depend on --from and runs the rest',
    )
    .requiredOption(
      '--from <step>',
      'the first step to run again in the new run (it and every step after it)',
    )
    .option('--plan <file>', 'an edited plan for the new run (the steps it keeps must be unchanged)')
    .option('-i, --input <name=value...>', "an input that changes, repeatable (the others are the old run's)")
    .option('--id <run-id>', "the new run's id (default: <run>-fork-<random>)")
    .option(
      '--workspace <dir>',
      "folder the new run works in, used as it is (default: a copy of the old run's workspace under <home>/workspaces/<new id>)",
    )
    .addOption(allowWorkspace())
    .addOption(agent())
    .addOption(json())
    .addHelpText(
      'after',
      `
The new run records forkedFrom (baton status shows it); baton diff <run> <new run> compares them
step by step. Kept steps' results are copied, their artifacts shared by reference. A fan-out the
new run runs again expands afresh.

Example:
  baton fork daily-20261012 --from report --plan daily-v2.yaml --id daily-20261012-v2
  baton check`,
    )
    .action(act(async () => (await import('./commands/fork.js')).forkCommand));
}
