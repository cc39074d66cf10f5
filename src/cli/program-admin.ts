import type { Command } from 'commander';
import { type Act, json } from './program-options.js';

/** Keeping the store: flow limits (flow set/list/rm) and gc. */
export function registerAdminCommands(program: Command, act: Act): void {
  const flow = program
    .command('flow')
    .description(
      'flow control: limit how many steps of one executor run at once and start per window, across all runs and workers',
    )
    .addHelpText(
      'after',
      `
A step's flow key is its plan's flowKey, else its executor: the agent command's base name
(claude, codex), the model provider (openai, anthropic) or fn:<name>. Limits live in the store,
so every worker on it (baton worker, run, check) obeys them; steps over a limit wait, due.

Examples:
  baton flow set claude --concurrency 2 --rate 10/1m   at most 2 at once, 10 started per minute
  baton flow set openai --rate 1/2m                    one call started every 2 minutes at most
  baton flow list                                      limits, with what runs now
  baton flow rm claude
`,
    );

  flow
    .command('set <key>')
    .description('set (or replace) the limit of a flow key')
    .option('--concurrency <n>', 'steps under the key running at once, across all workers')
    .option('--rate <starts/window>', 'steps started in any window, e.g. 10/1m, 10/min, 100/h, 1/2m')
    .addOption(json())
    .action(act(async () => (await import('./commands/flow.js')).flowSetCommand));

  flow
    .command('list')
    .description('every flow limit, with the steps running under it and its starts in the current window')
    .addOption(json())
    .action(act(async () => (await import('./commands/flow.js')).flowListCommand));

  flow
    .command('rm <key>')
    .description('remove the limit of a flow key')
    .addOption(json())
    .action(act(async () => (await import('./commands/flow.js')).flowRemoveCommand));
  program
    .command('gc')
    .description(
      'remove runs that finished long ago (with their events, attempts and logs) and unreferenced artifacts',
    )
    .requiredOption('--older-than <duration>', 'remove runs finished more than this long ago, e.g. 30d')
    .option('--dry-run', 'only say what would be removed')
    .option(
      '--vacuum',
      'then give the freed space back at once (SQLite: VACUUM, which needs free disk as large as the database)',
    )
    .addOption(json())
    .action(act(async () => (await import('./commands/gc.js')).gcCommand));
}
