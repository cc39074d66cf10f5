// A throwaway PostgreSQL 15 cluster, for the tests (test/helpers/postgres.ts) and the benchmarks
// (bench/pg-bench.mjs): initdb into a temporary folder, pg_ctl on 127.0.0.1 at a free port (as the
// `postgres` OS user when we are root: the server refuses root), trust authentication, every
// binary run with argv, never a shell string.
// Run on its own (`node scripts/pg-cluster.mjs`) it starts a cluster, prints its URL and stops it on Ctrl-C.
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIN_DIR = process.env.BATON_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const OS_USER = 'postgres';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function pgBinary(name, args) {
  const binary = join(BIN_DIR, name);
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot ? ['runuser', ['-u', OS_USER, '--', binary, ...args]] : [binary, args];
  try {
    await run(file, argv, { timeout: 60_000 });
  } catch (error) {
    throw new Error(`${name} ${args.join(' ')} failed: ${error.stderr || error.stdout || error}`);
  }
}

async function osUser(name) {
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
    run('id', ['-u', name]),
    run('id', ['-g', name]),
  ]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/**
 * Starts a cluster; returns `{ url, dataDir, port, startMs, stop(), restart() }`. `stop` stops it at
 * once (`-m immediate`) and removes its folder; `restart` is `pg_ctl restart -m fast` (connections
 * close, data stays); `halt` stops it keeping its data and `resume` starts it again on the same port. `settings` are extra `-c name=value` server settings.
 */
export async function startCluster(settings = []) {
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), 'baton-pg-'));
  const dataDir = join(root, 'data');
  if (process.getuid?.() === 0) {
    const { uid, gid } = await osUser(OS_USER);
    chownSync(root, uid, gid);
  }
  chmodSync(root, 0o700);
  const port = await freePort();
  const extra = settings.map((s) => `-c ${s}`).join(' ');
  const serverOptions = `-k ${root} -c listen_addresses=127.0.0.1 -p ${port} -c fsync=on -c max_connections=200 ${extra}`;
  const ctl = (args) => pgBinary('pg_ctl', ['-D', dataDir, '-l', join(root, 'server.log'), ...args]);
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
    async halt() {
      await ctl(['stop', '-m', 'fast', '-w', '-t', '30']);
    },
    async resume() {
      await ctl(['start', '-w', '-t', '30', '-o', serverOptions]);
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cluster = await startCluster();
  process.stdout.write(`${cluster.url}\n`);
  const stop = () => cluster.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  setInterval(() => undefined, 1 << 30);
}
