/**
 * A throwaway PostgreSQL 15 cluster for tests (scripts/pg-cluster.mjs, shared with the benchmarks):
 * initdb into a temporary directory, start it on 127.0.0.1 at a free port, stop it and delete
 * everything afterwards. Start one per test file (beforeAll/afterAll) and give each store its own
 * schema (`freshSchemaName`).
 */
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { startCluster } from '../../scripts/pg-cluster.mjs';

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trust authentication). */
  url: string;
  dataDir: string;
  port: number;
  /** Milliseconds initdb and start took together. */
  startMs: number;
  /** Stops the server at once (`-m immediate`) and removes its directory. */
  stop(): Promise<void>;
  /** `pg_ctl restart -m fast`: open connections are closed, the data stays. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`, keeping the data: the port refuses connections until `resume`. */
  halt(): Promise<void>;
  /** Starts the halted server again, on the same port with the same data. */
  resume(): Promise<void>;
}

export function startPostgres(): Promise<TestPostgres> {
  return startCluster() as Promise<TestPostgres>;
}

let schemas = 0;

/** A schema name no other store in this process uses: tests stay isolated on one cluster. */
export function freshSchemaName(prefix = 't'): string {
  schemas++;
  return `${prefix}_${process.pid}_${schemas}`;
}

/**
 * A cluster for the enclosing describe block (or file) and an admin pool on it, started before its
 * tests and stopped after them: read `.server` and `.admin` inside the tests.
 */
export function usePostgres(): { readonly server: TestPostgres; readonly admin: pg.Pool } {
  const held: { server?: TestPostgres; admin?: pg.Pool } = {};
  beforeAll(async () => {
    held.server = await startPostgres();
    held.admin = new pg.Pool({ connectionString: held.server.url, max: 2 });
    held.admin.on('error', () => undefined);
  }, 60_000);
  afterAll(async () => {
    await held.admin?.end();
    await held.server?.stop();
  });
  return {
    get server() {
      if (!held.server) throw new Error('usePostgres: the cluster is read before beforeAll started it');
      return held.server;
    },
    get admin() {
      if (!held.admin) throw new Error('usePostgres: the pool is read before beforeAll opened it');
      return held.admin;
    },
  };
}
