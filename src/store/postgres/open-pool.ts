import pg from 'pg';
import { BatonError } from '../../core/errors.js';

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;

const INT8_OID = 20;

/** bigint columns hold millisecond times and counts, all far below 2^53: read them as numbers. */
function batonTypes(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  types.setTypeParser(INT8_OID, Number);
  return types;
}

/** The URL with any password replaced, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable url)';
  }
}

/** A pool of `size` connections (default 10) that reads bigint as number. Connects lazily. */
export function createPool(url: string, size = 10): PgPool {
  if (!Number.isInteger(size) || size < 1) {
    throw new BatonError(
      'CONFIG_INVALID',
      `postgres poolSize: expected a whole number of connections of at least 1, got ${size}`,
    );
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: size,
    application_name: 'baton',
    types: batonTypes(),
  });
  // An idle connection that the server drops must not crash the process: the pool replaces it.
  pool.on('error', () => undefined);
  return pool;
}

/** Wraps a failure to reach the server as CONFIG_INVALID, naming the (redacted) URL. */
export function connectError(url: string, error: unknown): unknown {
  if (error instanceof BatonError) return error;
  const code = (error as { code?: string }).code;
  // SQLSTATE classes 08 (connection) and 28 (authorization), 3D000 (no such database), 42501 (the
  // role may not create the schema), and socket errno codes.
  const unreachable =
    typeof code === 'string' &&
    (/^(08|28)/.test(code) || code === '3D000' || code === '42501' || /^E[A-Z]+$/.test(code));
  if (!unreachable) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new BatonError(
    'CONFIG_INVALID',
    `cannot use the PostgreSQL database at ${redactUrl(url)} (${detail}); check the URL and that the server is running`,
    { cause: error },
  );
}
