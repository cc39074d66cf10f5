/**
 * `baton worker` and `baton check` started while their PostgreSQL server is down: they wait for it
 * with capped backoff and a line per retry (`--store-wait`: forever for a worker, 30 s for check),
 * then work; what waiting cannot fix (a missing database) is refused at once. Real cluster, real
 * processes; the server is really stopped and started again on the same port.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  expectExit,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir } from './helpers/plans.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

let server: TestPostgres;

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterEach(async () => {
  await stopProcesses();
  // A test that failed while the server was halted leaves it down for the next one.
  await server.resume().catch(() => undefined);
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

const RETRY_LINE = /store unreachable \(127\.0\.0\.1:\d+: .+\), retrying in \d+ s/;

describe('a store that cannot be reached yet', () => {
  it('a worker started while PostgreSQL is down waits for it, line by line, then runs what is due', async () => {
    const url = `${server.url}?schema=${freshSchemaName('wait')}`;
    const { dir, home } = planDir();
    const plan = writePlan(dir, fixturePlan([{ id: 'only', instruction: 'say hi' }]));
    await server.halt();
    const worker = spawnBaton(['--store', url, 'worker', '--quiet'], { home });
    // Two retry lines: it keeps waiting (the old worker exited 2 after the first failure).
    await waitFor(
      () => worker.stderr().match(new RegExp(RETRY_LINE, 'g'))?.length === 2,
      30_000,
      'two retry lines',
    );
    expect(worker.stderr()).toMatch(/retrying in 1 s[\s\S]*retrying in 2 s/);
    await server.resume();
    await waitFor(() => worker.stderr().includes('watching'), 60_000, 'the worker to connect');
    const started = expectExit(
      await runBaton(['--store', url, 'run', plan, '--detach', '--id', 'r1'], { home }),
      0,
    );
    expect(started.stdout).toContain('r1');
    await waitFor(
      async () => {
        const status = await runBaton(['--store', url, 'status', 'r1', '--json'], { home });
        return status.code === 0 && JSON.parse(status.stdout).status === 'succeeded';
      },
      60_000,
      'the worker to finish the run',
      200,
    );
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  });

  it('check gives up after --store-wait with exit 2 and the reason; --store-wait 0 does not wait', async () => {
    const url = `${server.url}?schema=${freshSchemaName('check')}`;
    const { home } = planDir();
    await server.halt();
    const waited = expectExit(await runBaton(['--store', url, 'check', '--store-wait', '2s'], { home }), 2);
    expect(waited.stderr).toMatch(RETRY_LINE);
    expect(waited.stderr).toMatch(/cannot use the PostgreSQL database at 127\.0\.0\.1:\d+/);
    const at0 = expectExit(await runBaton(['--store', url, 'check', '--store-wait', '0'], { home }), 2);
    expect(at0.stderr).not.toMatch(RETRY_LINE);
    expect(at0.stderr).toMatch(/cannot use the PostgreSQL database/);
    const bad = expectExit(await runBaton(['--store', url, 'check', '--store-wait', 'soon'], { home }), 2);
    expect(bad.stderr).toMatch(/--store-wait/);
  });

  it('a worker stopped by SIGTERM while it waits exits 0 at once', async () => {
    const url = `${server.url}?schema=${freshSchemaName('stop')}`;
    const { home } = planDir();
    await server.halt();
    const worker = spawnBaton(['--store', url, 'worker'], { home });
    await waitFor(() => RETRY_LINE.test(worker.stderr()), 30_000, 'a retry line');
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  });

  it('what waiting cannot fix is refused at once: a database that does not exist', async () => {
    const { home } = planDir();
    const url = server.url.replace(/\/postgres$/, '/no_such_database');
    const result = expectExit(await runBaton(['--store', url, 'worker'], { home, timeoutMs: 30_000 }), 2);
    expect(result.stderr).not.toMatch(RETRY_LINE);
    expect(result.stderr).toMatch(/no_such_database.*does not exist/);
  });
});
