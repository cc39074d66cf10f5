/**
 * The TypeScript API used the way a long-running service uses it: workers started at boot, before
 * any workflow is registered; runs started per request and claimed at once; PostgreSQL from code
 * (`Baton.open({ store: url })` and a PostgresStore built by hand), on a real cluster.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

/**
 * Longer than any test's deadline: a worker that waited for its poll would never claim the run
 * within the test, so a run that finishes proves it was claimed without the poll wait.
 */
const NEVER_MS = 10 * 60_000;

const homes: string[] = [];
const freshHome = () => {
  const home = mkdtempSync(join(tmpdir(), 'baton-service-'));
  homes.push(home);
  return home;
};
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

const greet = () =>
  defineWorkflow<{ name: string }>({ name: 'greet', inputs: { name: null } })
    .step('hello', (ctx) => `hello ${ctx.inputs.name}`)
    .step('shout', { dependsOn: ['hello'] }, (ctx) => ctx.results.hello.toUpperCase());

/** Boots a worker first, then starts runs as requests come, as a service does. */
async function serviceRoundTrip(baton: Baton) {
  const worker = baton.worker();
  try {
    // Registered only now, after the worker started: its steps are still claimed.
    const wf = greet();
    const first = await baton.start(wf, { name: 'ada' });
    expect(first.created).toBe(true);
    expect(await baton.result(wf, first.runId)).toEqual({ hello: 'hello ada', shout: 'HELLO ADA' });
    // A second request later, with the worker idle in its (ten-minute) poll sleep.
    const second = await baton.start(wf, { name: 'bob' }, { runId: 'request-2' });
    expect(await baton.result(wf, second.runId)).toEqual({ hello: 'hello bob', shout: 'HELLO BOB' });
    // A workflow registered while the worker sleeps, started by run id.
    const other = defineWorkflow({ name: 'other' }).step('only', () => 42);
    expect(await baton.run(other, {}, { runId: 'other-1' })).toEqual({ only: 42 });
  } finally {
    const report = await worker.stop(5000);
    expect(report.attemptsCommitted).toBe(5);
  }
}

describe('a worker started before its workflows (SQLite)', () => {
  it('claims steps of workflows registered after it started, at once, not at its next poll', async () => {
    const baton = Baton.open({ home: freshHome(), pollMs: NEVER_MS });
    try {
      await serviceRoundTrip(baton);
    } finally {
      await baton.close();
    }
  });
});

describe('a worker whose running step loses its run (SQLite)', () => {
  it('goes on after gc removed a cancelled run while its step still ran', async () => {
    const baton = Baton.open({ home: freshHome(), pollMs: 20 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = defineWorkflow({ name: 'slow' }).step('wait', async () => {
      await held;
      return 1;
    });
    const quick = defineWorkflow({ name: 'quick' }).step('one', () => 1);
    const worker = baton.worker();
    let failed: unknown = null;
    worker.done.catch((error: unknown) => {
      failed = error;
    });
    try {
      await baton.start(slow, {}, { runId: 'slow1' });
      const deadline = Date.now() + 20_000;
      while ((await baton.store.getRun('slow1'))?.steps[0]?.status !== 'running') {
        if (Date.now() > deadline) throw new Error('the slow step was never claimed');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Cancelled (its step keeps its lease until the function returns), then gc takes the run.
      await baton.store.cancelRun('slow1', Date.now());
      expect(await baton.store.deleteFinishedRuns(Date.now() + 1)).toEqual(['slow1']);
      release();
      // Before: the report of the gone run failed every cycle, and the worker stopped after ten.
      await baton.start(quick, {}, { runId: 'q1' });
      expect(await baton.result('q1')).toEqual({ one: 1 });
      expect(failed).toBeNull();
    } finally {
      await baton.close();
    }
  }, 60_000);
});

describe('PostgreSQL from code', () => {
  let server: TestPostgres;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('Baton.open({ store: url }) opens PostgreSQL (schema from ?schema=) and serves a booted worker', async () => {
    const schema = freshSchemaName('api');
    const baton = Baton.open({
      home: freshHome(),
      store: `${server.url}?schema=${schema}`,
      pollMs: NEVER_MS,
    });
    try {
      await serviceRoundTrip(baton);
      await baton.ready();
      expect(baton.store.kind).toBe('postgres');
      expect((await baton.store.listRuns()).map((run) => run.status)).toEqual([
        'succeeded',
        'succeeded',
        'succeeded',
      ]);
    } finally {
      await baton.close();
    }
    // The runs are in that schema: another store on it sees them.
    const reader = await PostgresStore.open(server.url, { schema });
    try {
      expect((await reader.getRun('request-2'))?.status).toBe('succeeded');
    } finally {
      await reader.close();
    }
  });

  it('takes a PostgresStore built by hand', async () => {
    const store = await PostgresStore.open(server.url, { schema: freshSchemaName('own') });
    const baton = Baton.open({ home: freshHome(), store });
    try {
      expect(await baton.run(greet(), { name: 'cy' })).toEqual({ hello: 'hello cy', shout: 'HELLO CY' });
      // The same store, behind the masking boundary.
      expect(baton.store.id).toBe(store.id);
      expect(await baton.store.listRuns()).toEqual(await store.listRuns());
    } finally {
      await baton.close();
    }
  });

  it('BATON_DATABASE_URL opens PostgreSQL for Baton.open as for the CLI', async () => {
    const schema = freshSchemaName('env');
    const saved = process.env.BATON_DATABASE_URL;
    process.env.BATON_DATABASE_URL = `${server.url}?schema=${schema}`;
    const fromEnv = Baton.open({ home: freshHome() });
    try {
      await fromEnv.ready();
      expect(fromEnv.store.kind).toBe('postgres');
      expect(await fromEnv.run(greet(), { name: 'env' })).toEqual({ hello: 'hello env', shout: 'HELLO ENV' });
    } finally {
      if (saved === undefined) delete process.env.BATON_DATABASE_URL;
      else process.env.BATON_DATABASE_URL = saved;
      await fromEnv.close();
    }
    const reader = await PostgresStore.open(server.url, { schema });
    try {
      expect((await reader.listRuns()).length).toBe(1);
    } finally {
      await reader.close();
    }
  });

  it('a URL given to Baton.open is masked in what its steps record, as the CLI masks --store', async () => {
    // The URL given as an option is in no variable: it is masked by name.
    const url = `${server.url}?schema=${freshSchemaName('mask')}`;
    const baton = Baton.open({ home: freshHome(), store: url });
    const leaky = defineWorkflow({ name: 'leaky' }).step('connect', { retry: { maxAttempts: 1 } }, () => {
      throw new Error(`could not reach ${url}`);
    });
    try {
      await expect(baton.run(leaky, {}, { runId: 'leaky-1' })).rejects.toThrow(/blocked/);
      const events = JSON.stringify(await baton.store.getEvents('leaky-1'));
      const attempts = JSON.stringify(await baton.store.getAttempts('leaky-1'));
      expect(events).toContain('could not reach');
      expect(events).not.toContain(url);
      expect(attempts).not.toContain(url);
    } finally {
      await baton.close();
    }
  });

  it('a store text that is not a PostgreSQL URL, or a server that is not there, is one clear error', async () => {
    const notUrl = Baton.open({ home: freshHome(), store: 'mysql://root:hunter2@db/app' });
    const refused = await notUrl.ready().catch((error: unknown) => error);
    expect(isBatonError(refused) && refused.code).toBe('CONFIG_INVALID');
    expect(String((refused as Error).message)).toMatch(/Baton.open store: .*is not a PostgreSQL URL/);
    expect(String((refused as Error).message)).not.toContain('hunter2');
    // Every method reports the same error rather than hanging.
    await expect(notUrl.start(greet(), { name: 'x' })).rejects.toThrow(/is not a PostgreSQL URL/);
    await notUrl.close();

    // A port nothing listens on (the cluster's, once stopped, is not reused here: ask the OS).
    const port = await closedPort();
    const down = Baton.open({ home: freshHome(), store: `postgres://u:secret@127.0.0.1:${port}/db` });
    const unreachable = await down.ready().catch((error: unknown) => error);
    expect(isBatonError(unreachable)).toBe(true);
    expect(String((unreachable as Error).message)).toContain(`127.0.0.1:${port}`);
    expect(String((unreachable as Error).message)).not.toContain('secret');
    expect(() => down.store).toThrow(/still being opened|cannot|ready/);
    await down.close();
  });
});

/** A local port that was free a moment ago (bound, then closed). */
async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolvePort) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolvePort(typeof address === 'object' && address ? address.port : 1));
    });
  });
}
