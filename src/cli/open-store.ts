import { BatonError } from '../core/errors.js';
import { maskPassword, parsePgUrl } from '../store/postgres/pg-url.js';
import type { Store } from '../store/store.js';
import { databasePath, type GlobalOptions, resolveHome } from './home.js';

/** The store a command line selects. */
export type StoreTarget =
  | { kind: 'sqlite'; path: string; label: string }
  | { kind: 'postgres'; url: string; schema: string; label: string };

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

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
  if (!POSTGRES_URL.test(raw.trim())) {
    throw new BatonError(
      'CONFIG_INVALID',
      `${where}: ${JSON.stringify(maskPassword(raw))} is not a PostgreSQL URL; give postgres://user:password@host:5432/database ` +
        `(add ?schema=<name> for a schema other than "baton"), or leave ${where} out to use the SQLite file in the home folder`,
    );
  }
  const [base = '', ...rest] = raw.trim().split('?');
  // The driver gets the other parameters exactly as written.
  const pairs = rest
    .join('?')
    .split('&')
    .filter((pair) => pair !== '');
  const isSchema = (pair: string) => pair.split('=')[0] === 'schema';
  const given = pairs.find(isSchema);
  // Not decoded: a valid schema name has no character that needs encoding (PostgresStore checks it).
  const schema = given?.slice('schema='.length) || env.BATON_PG_SCHEMA || 'baton';
  const query = pairs.filter((pair) => !isSchema(pair)).join('&');
  const url = query === '' ? base : `${base}?${query}`;
  if (!parsePgUrl(url)) {
    throw new BatonError(
      'CONFIG_INVALID',
      `${where}: ${JSON.stringify(maskPassword(raw))} is not a valid URL; check the host and port, and percent-encode ` +
        'special characters of the user name and password (e.g. @ as %40)',
    );
  }
  return { kind: 'postgres', url, schema, label: `${maskPassword(url)} (schema ${schema})` };
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
