import { isBatonError } from '../core/errors.js';
import { quickCheckArgs } from './check-args.js';
import { EXIT } from './exit-codes.js';
import { guardStdout } from './stdout-guard.js';

/**
 * The common forms of `baton check` skip commander (about a fifth of the start-up time); with
 * nothing to do, the idle check answers from one read. `idleTried`: the caller (the `baton`
 * launcher) asked the idle check already, and it had no answer.
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

/** Runs one `baton` command line (`argv` as process.argv) and returns its exit code. Never throws. */
export async function runCli(argv: readonly string[], idleTried = false): Promise<number> {
  try {
    const fast = await fastCheck(argv.slice(2), idleTried);
    if (fast !== null) return fast;
    guardStdout();
    return await (await import('./program.js')).runProgram([...argv]);
  } catch (error) {
    if (isBatonError(error)) {
      process.stderr.write(`baton: ${error.message}\n`);
      return EXIT.badInput;
    }
    process.stderr.write(
      `baton: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return EXIT.workFailed;
  }
}
