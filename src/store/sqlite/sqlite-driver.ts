import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Database from 'better-sqlite3';

const requireCjs = createRequire(import.meta.url);
let driver: typeof Database | undefined;
let addon: string | null | undefined;

/** better-sqlite3's JavaScript, bundled into the `baton` launcher, with the version it came from. */
export interface BundledSqliteDriver {
  driver: typeof Database;
  version: string;
}

/**
 * Uses a copy of better-sqlite3's JavaScript bundled into the caller (the `baton` launcher: one
 * file loads faster than the package's dozen) when it is the version installed beside the addon it
 * drives. Otherwise the installed package is required as usual.
 */
export function offerSqliteDriver(bundled: BundledSqliteDriver): void {
  if (driver === undefined && installedVersion() === bundled.version) driver = bundled.driver;
}

function installedVersion(): string | null {
  try {
    const manifest = join(dirname(requireCjs.resolve('better-sqlite3')), '..', 'package.json');
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

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
