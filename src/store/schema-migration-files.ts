import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One numbered SQL migration of a dialect folder (`000001.sql`, ...). */
export interface Migration {
  version: number;
  sql: string;
}

const cache = new Map<string, Migration[]>();

/** The numbered migrations of `dir`, in order, read once per process. */
export function readMigrations(dir: string): Migration[] {
  let migrations = cache.get(dir);
  if (!migrations) {
    migrations = readdirSync(dir)
      .filter((name) => /^\d{6}\.sql$/.test(name))
      .sort()
      .map((name) => ({ version: Number(name.slice(0, 6)), sql: readFileSync(join(dir, name), 'utf8') }));
    cache.set(dir, migrations);
  }
  return migrations;
}

/** The newest version in `dir` (0 when there is none). */
export function latestMigrationVersion(dir: string): number {
  const migrations = readMigrations(dir);
  return migrations[migrations.length - 1]?.version ?? 0;
}
