import { parseArgs } from 'node:util';
import type { GlobalOptions } from './home.js';

/** `baton check` in one of the forms a heartbeat or cron line uses. */
export interface QuickCheck {
  options: GlobalOptions & { quiet?: boolean };
  /** The skill's state.json that `baton check <state.json>` names; null for the store's check. */
  stateFile: string | null;
}

/**
 * `baton check` runs every few minutes, so its common forms (`--home`, `--json`, `--quiet`, at
 * most one state file) are read without the full command-line parser. Anything else, including
 * every mistake, is null: commander reads it and reports it properly.
 */
export function quickCheckArgs(args: readonly string[]): QuickCheck | null {
  if (args[0] !== 'check') return null;
  let parsed: ReturnType<typeof parseCheckArgs>;
  try {
    parsed = parseCheckArgs(args.slice(1));
  } catch {
    return null;
  }
  const { values, positionals } = parsed;
  if (positionals.length > 1) return null;
  return {
    options: {
      ...(values.home === undefined ? {} : { home: values.home }),
      ...(values.json ? { json: true } : {}),
      ...(values.quiet ? { quiet: true } : {}),
    },
    stateFile: positionals[0] ?? null,
  };
}

function parseCheckArgs(args: string[]) {
  return parseArgs({
    args,
    strict: true,
    allowPositionals: true,
    options: { home: { type: 'string' }, json: { type: 'boolean' }, quiet: { type: 'boolean' } },
  });
}
