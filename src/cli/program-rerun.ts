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
    .option(
      '--keep <steps>',
      'steps after --from that keep their results and do not run, comma-separated or repeated (what they did, e.g. a mail sent, is not done again)',
      (value: string, previous: string[] = []) => [...previous, ...value.split(',')],
    )
    .option(
      '--keep-effects',
      'keep every succeeded step after --from that has side effects (sideEffect: idempotent or unsafe)',
    )
    .option('--by <name>', 'who asks, recorded on the timeline (default: the OS user)')
    .option(
      '--keep-files',
      'leave the workspace as it is (default, when the step was checkpointed: its files are put back as they were before it)',
    )
    .addOption(json())
    .addHelpText(
      'after',
      `
Works on a run that succeeded, is blocked or is still running (a running step of the rerun is
stopped first, and starts again once its old attempt ended). Earlier attempts stay in the history;
attempt numbers continue. A cancelled run is never rerun: fork it (baton fork). Nothing runs until
baton check or baton worker drives the run.

With checkpoint: workspace in the plan, the workspace first goes back to how it was before the
step (files the old steps wrote are gone); that is refused while the run is still running
(--keep-files reruns it on the files as they are).

The answer lists the steps that run again and, of them, those with side effects (their effects
recorded with ctx.effect are not repeated unless --redo-effects). A step that ran with
sideEffect: unsafe is not rerun unless kept (--keep, --keep-effects) or --redo-effects is given.

Example:
  baton rerun daily-20261012 --from analyze     # analyze, then report and send, run again
  baton rerun daily-20261012 --from analyze --keep send   # the report is rebuilt, not sent again
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
      '--keep-files',
      "copy the old run's workspace as it ended (default, when the step was checkpointed: as it was before the step)",
    )
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
  program
    .command('rollback <run> <step>')
    .description(
      "put a run's workspace back as it was before a step (checkpoint: workspace); the steps keep their state",
    )
    .option('--by <name>', 'who asks, recorded on the timeline (default: the OS user)')
    .addOption(json())
    .addHelpText(
      'after',
      `
Refused while the run is running or awaiting approval: a step could start in a half-restored
folder. Safe against a crash at any instant: the next rollback, rerun, fork or diff --files
finishes or undoes an interrupted one, so the folder holds one recorded tree, never a mix. The
timeline's run.files_restored event keeps the tree it replaced; baton diff <run> --files shows
what each step changed.

Example:
  baton rollback daily-20261012 report     # the workspace as it was before report ran
  baton diff daily-20261012 --files report`,
    )
    .action(act(async () => (await import('./commands/rollback.js')).rollbackCommand));
}
