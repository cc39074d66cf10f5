#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { isBatonError } from '../core/errors.js';
import { EXIT } from './exit-codes.js';
import { guardStdout } from './stdout-guard.js';

/**
 * `baton check` runs every few minutes from heartbeats and cron, so its common forms skip the
 * full command-line parser (commander, about a fifth of the start-up time). Anything unusual,
 * including every mistake, goes through commander, which reports it properly.
 */
async function fastCheck(args: string[]): Promise<number | null> {
  if (args[0] !== 'check') return null;
  let parsed: ReturnType<typeof parseCheckArgs>;
  try {
    parsed = parseCheckArgs(args.slice(1));
  } catch {
    return null;
  }
  const { values, positionals } = parsed;
  if (positionals.length > 1) return null;
  const options = {
    ...(values.home === undefined ? {} : { home: values.home }),
    ...(values.json ? { json: true } : {}),
    ...(values.quiet ? { quiet: true } : {}),
  };
  if (positionals.length === 1) {
    guardStdout();
    return (await import('./commands/legacy.js')).legacyCommand('check', positionals[0]!, options);
  }
  const idle = (await import('./commands/check-idle.js')).idleCheck(options);
  if (idle !== null) return idle;
  guardStdout();
  return (await import('./commands/check.js')).checkCommand(options);
}

function parseCheckArgs(args: string[]) {
  return parseArgs({
    args,
    strict: true,
    allowPositionals: true,
    options: { home: { type: 'string' }, json: { type: 'boolean' }, quiet: { type: 'boolean' } },
  });
}

async function main(): Promise<void> {
  let exitCode: number;
  try {
    const fast = await fastCheck(process.argv.slice(2));
    if (fast === null) guardStdout();
    exitCode = fast ?? (await (await import('./program.js')).runProgram(process.argv));
  } catch (error) {
    if (isBatonError(error)) {
      process.stderr.write(`baton: ${error.message}\n`);
      exitCode = EXIT.badInput;
    } else {
      process.stderr.write(
        `baton: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      exitCode = EXIT.workFailed;
    }
  }
  process.exitCode = exitCode;
}

await main();
