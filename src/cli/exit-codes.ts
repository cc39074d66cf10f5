import { isBatonError } from '../core/errors.js';

/** Exit codes of every `baton` command. */
export const EXIT = {
  /** Done, or nothing to do. */
  ok: 0,
  /** Work failed, is blocked or was cancelled. */
  workFailed: 1,
  /** Bad input or configuration: nothing was changed. */
  badInput: 2,
} as const;

/**
 * How a command that threw ends: a BatonError (bad input) in one line and exit 2, anything else as
 * an internal error with its stack and exit 1. Returns the exit code.
 */
export function failedCommand(error: unknown): number {
  if (isBatonError(error)) {
    process.stderr.write(`baton: ${error.message}\n`);
    return EXIT.badInput;
  }
  process.stderr.write(
    `baton: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return EXIT.workFailed;
}
