/**
 * The `baton` command, bundled into one CommonJS file, dist/cli/baton.cjs, by
 * scripts/bundle-launcher.mjs. A heartbeat runs `baton check` every few minutes and nearly always
 * finds nothing due: that answer comes from this file, with the idle check and better-sqlite3's
 * JavaScript bundled into it, without Node's ES module loader and a dozen package files (about
 * 35 ms and 7 ms of every check on the test machine). Every other command line, and a check with
 * something to do, loads the CLI (run-cli.js) as usual.
 */
import Database from 'better-sqlite3';
import sqlitePackage from 'better-sqlite3/package.json' with { type: 'json' };
import { isBatonError } from '../core/errors.js';
import { type BundledSqliteDriver, offerSqliteDriver } from '../runtime/sqlite-driver.js';
import { type QuickCheck, quickCheckArgs } from './check-args.js';
import { idleCheck } from './commands/check-idle.js';
import { failedCommand } from './exit-codes.js';

/** better-sqlite3's JavaScript comes bundled too (the addon is loaded from the installed package). */
const sqlite: BundledSqliteDriver = { driver: Database, version: sqlitePackage.version };
offerSqliteDriver(sqlite);

/** The idle check's exit code, or null when the full check must answer. */
function idleAnswer(options: QuickCheck['options']): number | null {
  try {
    return idleCheck(options);
  } catch (error) {
    // Bad BATON_* settings: the full check refuses them with its usual message.
    if (isBatonError(error)) return null;
    // Anything else (stdout unwritable: ENOSPC, EBADF) ends the command as the CLI ends it.
    return failedCommand(error);
  }
}

const quick = quickCheckArgs(process.argv.slice(2));
const idle = quick !== null && quick.stateFile === null ? idleAnswer(quick.options) : null;
if (idle !== null) process.exitCode = idle;
else
  import('./run-cli.js').then(
    async ({ runCli }) => {
      process.exitCode = await runCli(process.argv, { sqlite });
    },
    (error: unknown) => {
      process.exitCode = failedCommand(error);
    },
  );
