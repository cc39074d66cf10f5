import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Database from 'better-sqlite3';

const requireCjs = createRequire(import.meta.url);
let driver: typeof Database | undefined;
let addon: string | null | undefined;

/**
 * The compiled addon of better-sqlite3, named directly. Without it better-sqlite3 asks the
 * `bindings` package, which tries a dozen paths first: about 5 ms of every start of `baton check`
 * and of every state.json check's lock. Null (let `bindings` search) when the file is elsewhere.
 */
function addonPath(): string | null {
  if (addon === undefined) {
    const lib = dirname(requireCjs.resolve('better-sqlite3'));
    const candidate = join(lib, '..', 'build', 'Release', 'better_sqlite3.node');
    addon = existsSync(candidate) ? candidate : null;
  }
  return addon;
}

/**
 * Opens a SQLite database with better-sqlite3. Required, not imported: loading a CommonJS package
 * through the ESM loader parses every file of it for its exports first.
 */
export function openSqliteFile(path: string, options: Database.Options = {}): Database.Database {
  driver ??= requireCjs('better-sqlite3') as typeof Database;
  const nativeBinding = addonPath();
  return new driver(path, nativeBinding === null ? options : { ...options, nativeBinding });
}
