import { BatonError } from '../core/errors.js';
import { isPostgresUrl, readPostgresUrl } from '../store/postgres/pg-url.js';
import type { Store } from '../store/store.js';
import { databasePath, type GlobalOptions, resolveHome } from './home.js';

/** The store a command line selects. */
export type StoreTarget =
  | { kind: 'sqlite'; path: string; label: string }
  | { kind: 'postgres'; url: string; schema: string; label: string };

/**
 * Which store to use: `--store <url>`, else BATON_DATABASE_URL, else the SQLite file in the home
 * folder. A URL must be postgres:// or postgresql://; its schema is `?schema=` (taken out of the URL
 * handed to the driver), else BATON_PG_SCHEMA, else "baton". Refuses anything else (exit 2).
 */
export function storeTarget(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): StoreTarget {
  const fromFlag = options.store !== undefined;
  const raw = fromFlag ? options.store : env.BATON_DATABASE_URL || undefined;
  if (raw === undefined) {
    const path = databasePath(resolveHome(options));
    return { kind: 'sqlite', path, label: path };
  }
  const where = fromFlag ? '--store' : 'BATON_DATABASE_URL';
  const target = readPostgresUrl(raw, where, env.BATON_PG_SCHEMA || 'baton');
  if ('problem' in target) {
    // On the command line, leaving the URL out is the other way.
    const hint = isPostgresUrl(raw) ? '' : `, or leave ${where} out to use the SQLite file in the home folder`;
    throw new BatonError('CONFIG_INVALID', `${target.problem}${hint}`);
  }
  return { kind: 'postgres', ...target };
}

/**
 * Opens the store the command line selects (see `storeTarget`): the one way every command opens it.
 * Attempt logs stay under the home folder whichever store holds the runs. A PostgreSQL server that
 * cannot be reached is a configuration error naming host:port, never the password.
 */
export async function openStore(options: GlobalOptions): Promise<Store> {
  const target = storeTarget(options);
  if (target.kind === 'sqlite') {
    const { SqliteStore } = await import('../store/sqlite/sqlite-store.js');
    return SqliteStore.open(target.path);
  }
  const { PostgresStore } = await import('../store/postgres/postgres-store.js');
  return PostgresStore.open(target.url, { schema: target.schema });
}
