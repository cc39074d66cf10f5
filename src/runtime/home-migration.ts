import { BatonError, isBatonError } from '../core/errors.js';
import { copyHomeToPostgres, type HomeCopyResult } from '../store/home-copy/copy-home.js';
import { maskPassword } from '../store/postgres/pg-url.js';
import type { RuntimeOptions } from './home.js';
import { type StoreTarget, storeTarget } from './open-store.js';

/**
 * `baton migrate`: a SQLite home's runs copied into PostgreSQL (store/home-copy/: one
 * transaction, the counts of every table verified before it commits), into the database `--to`
 * names, else the store the options select.
 */

export { COPIED_TABLES, type HomeCopyResult } from '../store/home-copy/copy-home.js';

/** A URL as it may be shown: its password masked (never printed). */
export const maskStoreUrl = maskPassword;

type PostgresTarget = Extract<StoreTarget, { kind: 'postgres' }>;

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** The PostgreSQL store to copy into: `to` (`--to`), else `--store`, else BATON_DATABASE_URL. */
export function migrationTarget(to: string | undefined, options: RuntimeOptions): PostgresTarget {
  if (to === undefined) {
    const target = storeTarget(options);
    if (target.kind === 'postgres') return target;
    throw new BatonError(
      'CONFIG_INVALID',
      '--to: required: the PostgreSQL database to copy into, e.g. --to postgres://user:password@host:5432/db ' +
        '(or set BATON_DATABASE_URL)',
    );
  }
  if (!POSTGRES_URL.test(to.trim())) {
    throw new BatonError(
      'CONFIG_INVALID',
      `--to: ${JSON.stringify(maskPassword(to))} is not a PostgreSQL URL; give postgres://user:password@host:5432/database ` +
        '(add ?schema=<name> for a schema other than "baton")',
    );
  }
  try {
    return storeTarget({ store: to }) as PostgresTarget;
  } catch (error) {
    // storeTarget names the flag it usually reads; here the URL came from --to.
    if (isBatonError(error)) throw new BatonError(error.code, error.message.replace(/^--store:/, '--to:'));
    throw error;
  }
}

/** Copies the runs of the SQLite file `from` (all, or `runIds`) into `target`. */
export function migrateHome(request: {
  from: string;
  target: PostgresTarget;
  runIds: readonly string[] | null;
}): Promise<HomeCopyResult> {
  return copyHomeToPostgres({
    from: request.from,
    url: request.target.url,
    schema: request.target.schema,
    runIds: request.runIds,
  });
}
