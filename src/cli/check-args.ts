import { parseArgs } from 'node:util';
import type { GlobalOptions } from './global-options.js';

/** `baton check` in one of the forms a heartbeat or cron line uses. */
export interface QuickCheck {
  options: GlobalOptions & { quiet?: boolean };
  /** The skill's state.json that `baton check <state.json>` names; null for the store's check. */
  stateFile: string | null;
}

/**
 * `baton check` runs every few minutes, so its common forms (`--home` before or after `check`,
 * `--json`, `--quiet`, at most one state file) are read without the full command-line parser.
 * Anything else, including every mistake, is null: commander reads it and reports it properly.
 */
export function quickCheckArgs(args: readonly string[]): QuickCheck | null {
  // `--home` is the CLI's global option: it may come before the command too (the later one wins).
  let leadingHome: string | undefined;
  let rest = args;
  if (rest[0] === '--home' && rest.length > 2) {
    leadingHome = rest[1];
    rest = rest.slice(2);
  } else if (rest[0]?.startsWith('--home=')) {
    leadingHome = rest[0].slice('--home='.length);
    rest = rest.slice(1);
  }
  if (rest[0] !== 'check') return null;
  let parsed: ReturnType<typeof parseCheckArgs>;
  try {
    parsed = parseCheckArgs(rest.slice(1));
  } catch {
    return null;
  }
  const { values, positionals } = parsed;
  if (positionals.length > 1) return null;
  const home = values.home ?? leadingHome;
  return {
    options: {
      ...(home === undefined ? {} : { home }),
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
