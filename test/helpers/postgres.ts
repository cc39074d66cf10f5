/**
 * A throwaway PostgreSQL 15 cluster for tests: initdb into a temporary directory, start it on
 * 127.0.0.1 at a free port, stop it and delete everything afterwards. Start one per test file
 * (beforeAll/afterAll) and give each store its own schema (`freshSchemaName`).
 */
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const BIN_DIR = process.env.BATON_PG_BIN ?? '/usr/lib/postgresql/15/bin';
/** The server refuses to run as root: as root, the binaries run as this OS user. */
const OS_USER = 'postgres';

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
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Runs a PostgreSQL binary with argv (never a shell string), as `postgres` when we are root. */
async function pgBinary(name: string, args: string[]): Promise<void> {
  const binary = join(BIN_DIR, name);
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot ? ['runuser', ['-u', OS_USER, '--', binary, ...args]] : [binary, args];
  try {
    await run(file, argv, { timeout: 60_000 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${name} ${args.join(' ')} failed: ${stderr || stdout || String(error)}`, {
      cause: error,
    });
  }
}

export async function startPostgres(): Promise<TestPostgres> {
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), 'baton-pg-'));
  const dataDir = join(root, 'data');
  if (process.getuid?.() === 0) {
    const { uid, gid } = await osUser(OS_USER);
    chownSync(root, uid, gid);
  }
  chmodSync(root, 0o700);
  const port = await freePort();
  const logFile = join(root, 'server.log');
  const serverOptions = `-k ${root} -c listen_addresses=127.0.0.1 -p ${port} -c fsync=on -c max_connections=200`;
  const ctl = (args: string[]) => pgBinary('pg_ctl', ['-D', dataDir, '-l', logFile, ...args]);
  try {
    await pgBinary('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    await ctl(['start', '-w', '-t', '30', '-o', serverOptions]);
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir,
    port,
    startMs: Date.now() - started,
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await ctl(['stop', '-m', 'immediate', '-w', '-t', '30']);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
    async restart() {
      await ctl(['restart', '-m', 'fast', '-w', '-t', '30', '-o', serverOptions]);
    },
  };
}

async function osUser(name: string): Promise<{ uid: number; gid: number }> {
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
    run('id', ['-u', name]),
    run('id', ['-g', name]),
  ]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

let schemas = 0;

/** A schema name no other store in this process uses: tests stay isolated on one cluster. */
export function freshSchemaName(prefix = 't'): string {
  schemas++;
  return `${prefix}_${process.pid}_${schemas}`;
}
