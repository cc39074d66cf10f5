import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';

/** This module's folder (`import.meta.dirname` from Node 20.11; `__dirname` once bundled). */
const here: string = import.meta.dirname ?? dirname(fileURLToPath(import.meta.url));
let requireCjs: NodeJS.Require | undefined;
let driver: typeof Database | undefined;
let offered: BundledSqliteDriver | undefined;
let packageDir: string | null | undefined;
let addon: string | null | undefined;

/** better-sqlite3's JavaScript, bundled into the `baton` launcher, with the version it came from. */
export interface BundledSqliteDriver {
  driver: typeof Database;
  version: string;
}

/**
 * Offers a copy of better-sqlite3's JavaScript bundled into the caller (the `baton` launcher: one
 * file loads faster than the package's dozen). It is used if it is the version installed beside
 * the addon it would drive; otherwise the installed package is required as usual.
 */
export function offerSqliteDriver(bundled: BundledSqliteDriver): void {
  offered ??= bundled;
}

function cjs(): NodeJS.Require {
  requireCjs ??= createRequire(import.meta.url);
  return requireCjs;
}

/**
 * The installed better-sqlite3 folder, found as Node finds it from here: in the nearest
 * `node_modules` up the tree (a few file checks, where require.resolve costs ~3 ms of a start);
 * anywhere else (NODE_PATH, a global folder), Node is asked.
 */
function installedPackage(): string | null {
  if (packageDir === undefined) {
    packageDir = null;
    for (let dir = here; ; dir = dirname(dir)) {
      const candidate = join(dir, 'node_modules', 'better-sqlite3');
      if (existsSync(join(candidate, 'package.json'))) {
        packageDir = candidate;
        break;
      }
      if (dirname(dir) === dir) break;
    }
    if (packageDir === null) {
      try {
        packageDir = join(dirname(cjs().resolve('better-sqlite3')), '..');
      } catch {
        // Not installed: requiring it reports that.
      }
    }
  }
  return packageDir;
}

function installedVersion(): string | null {
  const dir = installedPackage();
  if (dir === null) return null;
  try {
    return (
      (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version ?? null
    );
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
    const dir = installedPackage();
    const candidate = dir === null ? null : join(dir, 'build', 'Release', 'better_sqlite3.node');
    addon = candidate !== null && existsSync(candidate) ? candidate : null;
  }
  return addon;
}

/**
 * The bundled copy when it matches the installed package and the addon is where it is named
 * directly, else the package itself: the copy's own addon search (`bindings`) would look beside
 * the bundle, not in better-sqlite3's folder.
 */
function loadDriver(): typeof Database {
  if (offered !== undefined && addonPath() !== null && installedVersion() === offered.version)
    return offered.driver;
  // Required, not imported: loading a CommonJS package through the ESM loader parses every file
  // of it for its exports first.
  return cjs()('better-sqlite3') as typeof Database;
}

/** Opens a SQLite database with better-sqlite3. */
export function openSqliteFile(path: string, options: Database.Options = {}): Database.Database {
  driver ??= loadDriver();
  const nativeBinding = addonPath();
  return new driver(path, nativeBinding === null ? options : { ...options, nativeBinding });
}
