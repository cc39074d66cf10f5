import { createRequire } from 'node:module';
import type pg from 'pg';
import { BatonError } from '../../core/errors.js';
import { StoreUnreachableError } from '../store-unreachable.js';
import { maskPassword, parsePgUrl, serverAddress } from './pg-url.js';

let pgModule: typeof pg | undefined;

/**
 * The PostgreSQL driver, loaded by the first pool or client (about 15 MB of a process): a program
 * that imports Baton and stays on SQLite never loads it.
 */
function pgDriver(): typeof pg {
  pgModule ??= createRequire(import.meta.url)('pg') as typeof pg;
  return pgModule;
}

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;

const INT8_OID = 20;

/** bigint columns hold millisecond times and counts, all far below 2^53: read them as numbers. */
function batonTypes(): pg.CustomTypesConfig {
  const types = new (pgDriver().TypeOverrides)();
  types.setTypeParser(INT8_OID, Number);
  return types;
}

/** How long opening a connection may take before it counts as failed (ms). */
const CONNECT_TIMEOUT_MS = 10_000;

/** A pool of `size` connections (default 10) that reads bigint as number. Connects lazily. */
export function createPool(url: string, size = 10): PgPool {
  if (!Number.isInteger(size) || size < 1) {
    throw new BatonError(
      'CONFIG_INVALID',
      `postgres poolSize: expected a whole number of connections of at least 1, got ${size}`,
    );
  }
  const pool = new (pgDriver().Pool)({
    connectionString: url,
    max: size,
    application_name: 'baton',
    types: batonTypes(),
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
  });
  // A connection the server drops (restart, pg_terminate_backend) must not crash the process. Idle
  // ones are reported here and replaced by the pool; a checked-out one fails its query, which fails
  // the transaction (the engine retries the cycle), and the broken client is discarded on release.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  return pool;
}

/** A client of its own for LISTEN (a pooled connection would be handed to other work). */
export function createListenClient(url: string): pg.Client {
  return new (pgDriver().Client)({
    connectionString: url,
    application_name: 'baton-listen',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
  });
}

/**
 * Wraps a failure to reach or use the server as CONFIG_INVALID, naming host:port and the URL with its
 * password masked. `connecting`: the first connection failed, whatever the error (a timeout has no code).
 */
export function connectError(url: string, error: unknown, connecting = false): unknown {
  if (error instanceof BatonError) return error;
  const code = (error as { code?: string }).code;
  // SQLSTATE classes 08 (connection) and 28 (authorization), 3D000 (no such database), 42501 (the
  // role may not create the schema), and socket errno codes.
  const unreachable =
    typeof code === 'string' &&
    (/^(08|28)/.test(code) || ['3D000', '42501', '57P03', '53300'].includes(code) || /^E[A-Z]+$/.test(code));
  if (!unreachable && !connecting) return error;
  let detail = error instanceof Error ? error.message : String(error);
  const parsed = parsePgUrl(url);
  for (const password of [parsed?.password, parsed?.searchParams.get('password')]) {
    if (!password) continue;
    for (const form of [password, safeDecode(password)]) if (form) detail = detail.replaceAll(form, '***');
  }
  const message = `cannot use the PostgreSQL database at ${serverAddress(url)} (${maskPassword(url)}): ${detail}; check the URL and that the server is running`;
  if (worthWaitingFor(code, connecting)) {
    return new StoreUnreachableError(message, `${serverAddress(url)}: ${detail}`, { cause: error });
  }
  return new BatonError('CONFIG_INVALID', message, { cause: error });
}

/**
 * A server that is down, restarting or full comes back: socket errors, SQLSTATE class 08
 * (connection exception), 57P03 (starting up or shutting down), 53300 (too many connections), and
 * a first connection that timed out without a code. A refused login (28), a missing database
 * (3D000) or a missing right (42501) does not go away by waiting.
 */
function worthWaitingFor(code: string | undefined, connecting: boolean): boolean {
  if (code === undefined) return connecting;
  return /^E[A-Z]+$/.test(code) || /^08/.test(code) || code === '57P03' || code === '53300';
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/** Opens one connection to see that the server can be reached: any failure is a configuration error. */
export async function firstConnection(pool: PgPool, url: string): Promise<void> {
  try {
    (await pool.connect()).release();
  } catch (error) {
    throw connectError(url, error, true);
  }
}
