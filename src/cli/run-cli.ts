import { type BundledSqliteDriver, offerSqliteDriver } from '../runtime/sqlite-driver.js';
import { quickCheckArgs } from './check-args.js';
import { failedCommand } from './exit-codes.js';
import { guardStdout } from './stdout-guard.js';

/**
 * The common forms of `baton check` skip commander (about a fifth of the start-up time); with
 * nothing to do, the idle check answers from one read. `idleTried`: the `baton` launcher asked it
 * already (it does for every check of the store it reads from the same command line).
 */
async function fastCheck(args: readonly string[], idleTried: boolean): Promise<number | null> {
  const quick = quickCheckArgs(args);
  if (quick === null) return null;
  if (quick.stateFile !== null) {
    guardStdout();
    return (await import('./commands/legacy.js')).legacyCommand('check', quick.stateFile, quick.options);
  }
  if (!idleTried) {
    const idle = (await import('./commands/check-idle.js')).idleCheck(quick.options);
    if (idle !== null) return idle;
  }
  guardStdout();
  return (await import('./commands/check.js')).checkCommand(quick.options);
}

/** What the `baton` launcher hands over to the CLI when the idle check had no answer. */
interface LauncherHandover {
  /** better-sqlite3's JavaScript as the launcher bundled it (see offerSqliteDriver). */
  sqlite: BundledSqliteDriver;
}

/** Runs one `baton` command line (`argv` as process.argv) and returns its exit code. Never throws. */
export async function runCli(argv: readonly string[], launcher?: LauncherHandover): Promise<number> {
  if (launcher) offerSqliteDriver(launcher.sqlite);
  try {
    const fast = await fastCheck(argv.slice(2), launcher !== undefined);
    if (fast !== null) return fast;
    guardStdout();
    return await (await import('./program.js')).runProgram([...argv]);
  } catch (error) {
    return failedCommand(error);
  }
}
