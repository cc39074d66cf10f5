import { Command, CommanderError } from 'commander';
import { EXIT } from './exit-codes.js';
import { registerActionCommands } from './program-actions.js';
import { registerAdminCommands } from './program-admin.js';
import { loadMcpToolNames, registerMcpCommands } from './program-mcp.js';
import type { Act } from './program-options.js';
import { registerReadCommands } from './program-reads.js';
import { registerRerunCommands } from './program-rerun.js';
import { registerRunCommands } from './program-runs.js';
import { registerScheduleCommands } from './program-schedules.js';
import { registerSetupCommands } from './program-setup.js';
import { registerTriggerCommands } from './program-triggers.js';

const program = new Command()
  .name('baton')
  .description(
    'A durable step sequencer for AI agents: a plan of steps run by agent CLIs, model calls or functions, stored in SQLite (or PostgreSQL), ' +
      'surviving crashes, retrying what is worth retrying and handing the rest to a human.',
  )
  .version('0.1.0')
  .option('--home <dir>', 'Baton folder holding baton.db and attempt logs (env BATON_HOME)', undefined)
  .option(
    '--store <url>',
    'keep runs in PostgreSQL instead of baton.db: postgres://user:password@host:5432/db[?schema=name] ' +
      '(env BATON_DATABASE_URL; schema also BATON_PG_SCHEMA, default baton)',
  )
  .showHelpAfterError('(run baton <command> --help for usage)')
  .exitOverride()
  .addHelpText(
    'after',
    `
Exit codes: 0 ok, 1 work failed or is blocked, 2 bad input or configuration.

Secrets: BATON_SECRET_ENV=NAME,NAME (or NAME:NAME) names more variables whose values are masked in
everything Baton records and prints and never reach an agent or a hook command, like the store URL,
hooks' urlEnv and (unless the agent CLI reads it) models' apiKeyEnv.

Quick start:
  baton init                      write a starter plan (baton.plan.yaml)
  baton run baton.plan.yaml       run it in the foreground
  baton status                    list runs; baton status <run> for its steps
  baton check                     run what is due, then exit (for cron / heartbeats)`,
  );

type Action = (...args: never[]) => Promise<number>;
let exitCode: number = EXIT.ok;
const act: Act =
  <A extends unknown[]>(load: () => Promise<(...args: A) => Promise<number>>) =>
  async (...args: A) => {
    const command = args[args.length - 1] as Command;
    const options = { ...program.opts(), ...command.opts() };
    const fn = await load();
    const positional = args.slice(0, -2);
    exitCode = await (fn as unknown as Action)(...(positional as never[]), options as never);
  };

// Each command's module is imported when the command runs, so a command loads only what it uses.
// Registered in this order: the order of `baton --help`.
registerRunCommands(program, act);
registerReadCommands(program, act);
registerActionCommands(program, act);
registerScheduleCommands(program, act);
registerTriggerCommands(program, act);
registerRerunCommands(program, act);
registerSetupCommands(program, act);
registerMcpCommands(program, act);
registerAdminCommands(program, act);

/** The command tree, for what walks every command (docs, the masking contract test). */
export function commandTree(): Command {
  return program;
}

/** Parses the command line with commander and runs the command; returns its exit code. */
export async function runProgram(argv: string[]): Promise<number> {
  try {
    await loadMcpToolNames(argv);
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.badInput;
    throw error;
  }
  return exitCode;
}
