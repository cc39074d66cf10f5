/**
 * `baton migrate --from <baton.db> --to postgres://...` end to end: runs made by the real CLI in a
 * SQLite home (a succeeded run with artifacts, an effect and hooks, a blocked run, a run with a
 * retry, a run stored with --detach, a run holding an event sent before its step waits) are copied into a real PostgreSQL 15 cluster and read back
 * through the CLI with --store; the detached run and the one holding the kept event are then
 * finished from PostgreSQL. Refusals (runs
 * already there, a file that is not Baton's, an old schema) exit 2 and change nothing, and the
 * password of the URL never appears in any output.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COPIED_TABLES, copyHomeToPostgres } from '../src/store/home-copy/copy-home.js';
import { SQLITE_SCHEMA_VERSION } from '../src/store/schema-tables.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import {
  type AttemptJson,
  agentCommand,
  type BatonOptions,
  type BatonResult,
  type EventJson,
  expectExit,
  fixture,
  type RunJson,
  readCounts,
  removeTempDirs,
  runBaton,
  stopProcesses,
  tempDir,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir } from './helpers/plans.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

const PASSWORD = 'Pw-not-for-eyes-93';
const RUNS = ['ok1', 'blk', 'rty', 'det', 'wev'];

let server: TestPostgres;
let admin: pg.Pool;
let home: string;
let dir: string;
let dbPath: string;
/** Every CLI result of this file: none may show the password. */
const outputs: BatonResult[] = [];

/** The test server's URL with a password (trust authentication ignores it) and a schema. */
function urlFor(schema: string): string {
  return `${server.url.replace('postgres@', `postgres:${PASSWORD}@`)}?schema=${schema}`;
}

async function baton(args: string[], options: BatonOptions = {}): Promise<BatonResult> {
  const result = await runBaton(args, { home, ...options });
  outputs.push(result);
  return result;
}

async function json<T>(args: string[], codes: number[] = [0]): Promise<T> {
  const result = await baton([...args, '--json']);
  if (result.code === null || !codes.includes(result.code)) {
    throw new Error(`baton ${args.join(' ')} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  }
  return JSON.parse(result.stdout) as T;
}

/** Rows per table in `schema`, all runs together. */
async function pgCounts(schema: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of COPIED_TABLES) {
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".${table}`);
    counts[table] = rows[0].n;
  }
  return counts;
}

/** sha256 of the SQLite file and its WAL (a missing WAL counts as empty). */
function sqliteDigest(): string {
  const hash = createHash('sha256');
  for (const file of [dbPath, `${dbPath}-wal`])
    hash.update(existsSync(file) ? readFileSync(file) : Buffer.alloc(0));
  return hash.digest('hex');
}

beforeAll(async () => {
  const started = startPostgres();
  ({ dir, home } = planDir('baton-migrate-'));
  dbPath = join(home, 'baton.db');
  const hook = { command: [process.execPath, fixture('hook-record')] };
  const env = {
    HOOK_FILE: join(dir, 'hooks.jsonl'),
    WRITE_OUTPUTS: 'out/report.txt',
    FLAKY_FAILS: '1',
    FLAKY_COUNTER: join(dir, 'flaky-count'),
  };
  const plan = (name: string, steps: object[], agent: string, extra: Record<string, unknown> = {}) =>
    writePlan(dir, fixturePlan(steps, { name, ...extra }, agent), { name: `${name}.yaml` });
  const okPlan = plan(
    'outputs',
    [
      { id: 'write', instruction: 'write the report', requiredOutputs: ['out/report.txt'] },
      { id: 'after', instruction: 'read it', dependsOn: ['write'] },
    ],
    'agent-write-outputs',
    { hooks: [{ on: ['succeeded', 'failed'], ...hook }] },
  );
  const blockedPlan = plan(
    'blocked',
    [
      { id: 'first', instruction: 'go' },
      {
        id: 'broken',
        instruction: 'fail',
        dependsOn: ['first'],
        agent: { command: agentCommand('agent-fail') },
      },
    ],
    'agent-succeed',
    { defaults: { retry: { maxAttempts: 1 } }, hooks: [{ on: ['blocked', 'failed'], ...hook }] },
  );
  const retryPlan = plan('retry', [{ id: 'flaky', instruction: 'try' }], 'agent-flaky');
  const detachedPlan = plan(
    'detached',
    [
      { id: 'one', instruction: 'one' },
      { id: 'two', instruction: 'two', dependsOn: ['one'] },
    ],
    'agent-count',
  );
  // Its wait step waits for ci-green once its run is driven; the event is sent before, and kept.
  const waitPlan = plan(
    'waits',
    [
      { id: 'ci', wait: { for: 'event', event: 'ci-green', timeout: '1h', onTimeout: 'block' } },
      { id: 'deploy', instruction: 'deploy', dependsOn: ['ci'] },
    ],
    'agent-succeed',
  );
  const made = await Promise.all([
    runBaton(['run', okPlan, '--id', 'ok1', '-l', 'team=growth'], { home, env }),
    runBaton(['run', blockedPlan, '--id', 'blk'], { home, env }),
    runBaton(['run', retryPlan, '--id', 'rty'], { home, env }),
    runBaton(['run', detachedPlan, '--id', 'det', '--detach'], { home, env }),
    runBaton(['run', waitPlan, '--id', 'wev', '--detach'], { home, env }),
  ]);
  expect(
    made.map((result) => result.code),
    made.map((r) => r.stderr).join('\n'),
  ).toEqual([0, 1, 0, 0, 0]);
  const sent = await runBaton(['send', 'ci-green', '--run', 'wev', '--data', '{"sha":"c0ffee"}'], { home });
  expect(sent.code, sent.stderr).toBe(0);
  // A recorded effect (model write tools and ctx.effect record them while a step runs).
  const sqlite = await SqliteStore.open(dbPath);
  const key = { runId: 'ok1', stepId: 'write', key: 'send-mail' };
  await sqlite.beginEffect(key, Date.now());
  await sqlite.completeEffect(key, { sent: true }, Date.now());
  // A flow limit (configuration, copied along).
  await sqlite.setFlowLimit({ key: 'node', concurrency: 3, rate: { count: 20, windowMs: 60_000 } }, 7);
  // A schedule (configuration, copied along; it goes on from its cursor).
  const scheduled = (await sqlite.getRun('ok1'))!;
  await sqlite.addSchedule({
    name: 'daily',
    plan: scheduled.plan,
    planHash: scheduled.planHash,
    inputs: {},
    workspace: scheduled.workspace,
    rules: { timing: { everyMs: 86_400_000 }, overlap: 'skip', catchUpMs: null, startAt: null, endAt: null },
    now: 1000,
  });
  await sqlite.pauseSchedule('daily', 3000);
  await sqlite.close();
  server = await started;
  admin = new pg.Pool({ connectionString: server.url, max: 2 });
  admin.on('error', () => undefined);
}, 60_000);

afterAll(async () => {
  await stopProcesses();
  await admin?.end();
  await server?.stop();
  removeTempDirs();
});

describe('baton migrate', () => {
  const schema = freshSchemaName('mig');

  it('copies every run, reads back equal through the CLI, and refuses a second copy', async () => {
    const before = sqliteDigest();
    const report = await json<{
      ok: boolean;
      runs: number;
      to: string;
      counts: Record<string, { source: number; target: number }>;
    }>(['migrate', '--from', dbPath, '--to', urlFor(schema)]);
    expect(sqliteDigest()).toBe(before);
    expect(report).toMatchObject({ ok: true, runs: 5 });
    expect(report.to).toContain('postgres:***@');
    for (const table of COPIED_TABLES) {
      expect(report.counts[table]!.target, table).toBe(report.counts[table]!.source);
      if (table !== 'effects') expect(report.counts[table]!.source, table).toBeGreaterThan(0);
    }
    expect(report.counts.effects!.source).toBe(1);
    expect(report.counts.wait_events!.source).toBe(1);
    expect(report.counts.runs!.source).toBe(5);

    const store = ['--store', urlFor(schema)];
    for (const runId of RUNS) {
      const [fromSqlite, fromPg] = await Promise.all([
        json<RunJson>(['status', runId], [0, 1]),
        json<RunJson>([...store, 'status', runId], [0, 1]),
      ]);
      expect(fromPg).toEqual(fromSqlite);
      const [eventsSqlite, eventsPg] = await Promise.all([
        json<EventJson[]>(['timeline', runId]),
        json<EventJson[]>([...store, 'timeline', runId]),
      ]);
      const withoutSeq = (events: EventJson[]) => events.map(({ seq: _seq, ...event }) => event);
      expect(withoutSeq(eventsPg)).toEqual(withoutSeq(eventsSqlite));
      const seqs = eventsPg.map((event) => event.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      for (const step of fromSqlite.steps.filter((s) => s.attempt > 0)) {
        const [logsSqlite, logsPg] = await Promise.all([
          json<AttemptJson[]>(['logs', runId, step.stepId]),
          json<AttemptJson[]>([...store, 'logs', runId, step.stepId]),
        ]);
        expect(logsPg).toEqual(logsSqlite);
      }
    }
    const ok = await json<RunJson>([...store, 'status', 'ok1']);
    expect(ok.status).toBe('succeeded');
    const attempts = await json<AttemptJson[]>([...store, 'logs', 'ok1', 'write']);
    expect(attempts[0]!.outputs.map((o) => o.path)).toEqual(['out/report.txt']);
    expect((await json<AttemptJson[]>([...store, 'logs', 'rty', 'flaky'])).map((a) => a.outcome)).toEqual([
      'failed',
      'succeeded',
    ]);
    // The hook deliveries point at the events' new seq values.
    const { rows } = await admin.query(
      `SELECT e.type FROM "${schema}".hook_deliveries d JOIN "${schema}".events e ON e.seq = d.event_seq
       ORDER BY e.seq`,
    );
    expect(rows.map((row) => row.type).sort()).toEqual(['run.blocked', 'run.succeeded', 'step.failed']);
    // Flow limits come along, and every step row carries its flow key (the fixtures run `node`; a
    // wait step has its own).
    const flow = await json<{ key: string; concurrency: number; rate: unknown }[]>([
      ...store,
      'flow',
      'list',
    ]);
    expect(flow).toMatchObject([{ key: 'node', concurrency: 3, rate: { count: 20, windowMs: 60_000 } }]);
    const keys = await admin.query(`SELECT DISTINCT flow_key FROM "${schema}".steps`);
    expect(keys.rows.map((row) => row.flow_key).sort()).toEqual(['node', 'wait']);
    // The schedule comes along, paused.
    const schedules = await json<{ name: string; paused: boolean; timing: string }[]>([
      ...store,
      'schedule',
      'list',
    ]);
    expect(schedules).toMatchObject([{ name: 'daily', paused: true, timing: 'every 1d' }]);

    // Again: refused before anything is written, in either database.
    const countsBefore = await pgCounts(schema);
    const again = expectExit(await baton(['migrate', '--from', dbPath, '--to', urlFor(schema)]), 2);
    expect(again.stderr).toContain('5 of the 5 run(s) to copy are already in the target');
    expect(again.stderr).toMatch(/blk, det, ok1, rty, wev/);
    expect(await pgCounts(schema)).toEqual(countsBefore);
    expect(sqliteDigest()).toBe(before);
  }, 180_000);

  it('lets baton check finish from PostgreSQL a run stored with --detach in SQLite, taking its kept event', async () => {
    const counts = join(dir, 'det-counts');
    const check = await baton(['--store', urlFor(schema), 'check'], { env: { COUNT_FILE: counts } });
    // Exit 1: the migrated run blk is still blocked.
    expectExit(check, 1);
    expect(check.stdout).toContain('BLOCKED run blk');
    expect(readCounts(counts).map((line) => `${line.run} ${line.step}`)).toEqual(['det one', 'det two']);
    const run = await json<RunJson>(['--store', urlFor(schema), 'status', 'det']);
    expect(run.status).toBe('succeeded');
    // The event sent in SQLite before ci waited was copied: ci took it when it started waiting.
    const waited = await json<RunJson>(['--store', urlFor(schema), 'status', 'wev']);
    expect(waited.status).toBe('succeeded');
    const ci = waited.steps.find((step) => step.stepId === 'ci') as { resultJson?: string | null };
    expect(JSON.parse(ci.resultJson ?? 'null')).toMatchObject({ value: { sha: 'c0ffee' } });
    const kept = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".wait_events`);
    expect(kept.rows[0].n).toBe(0);
    // The SQLite copy is left as it was.
    expect((await json<RunJson>(['status', 'det'])).status).toBe('running');
    expect((await json<RunJson>(['status', 'wev'])).status).toBe('running');
  }, 30_000);

  it('copies only the runs named by --runs, and refuses unknown ones', async () => {
    const only = freshSchemaName('mig');
    const result = expectExit(
      await baton(['migrate', '--from', dbPath, '--to', urlFor(only), '--runs', 'rty,blk']),
      0,
    );
    expect(result.stdout).toMatch(/copied 2 run\(s\)/);
    expect(result.stdout).toContain('Attempt logs and result artifacts stay where they are');
    expect(result.stdout).toMatch(/runs\s+2\s+2/);
    const listed = await json<{ id: string }[]>(['--store', urlFor(only), 'status']);
    expect(listed.map((run) => run.id).sort()).toEqual(['blk', 'rty']);
    const unknown = expectExit(
      await baton([
        'migrate',
        '--from',
        dbPath,
        '--to',
        urlFor(freshSchemaName('mig')),
        '--runs',
        'rty,nope',
      ]),
      2,
    );
    expect(unknown.stderr).toContain('--runs: nope not in');
  }, 30_000);

  it('rolls back and reports the counts when the target does not hold what was copied', async () => {
    const target = freshSchemaName('mig');
    const result = await copyHomeToPostgres({
      from: dbPath,
      url: server.url,
      schema: target,
      runIds: ['ok1'],
      beforeVerify: async (client, quoted) => {
        await client.query(
          `DELETE FROM ${quoted}.events WHERE seq = (SELECT max(seq) FROM ${quoted}.events)`,
        );
      },
    });
    expect(result).toMatchObject({ ok: false, reason: 'count_mismatch' });
    expect(result.target.events).toBe(result.source.events - 1);
    expect(await pgCounts(target)).toEqual(Object.fromEntries(COPIED_TABLES.map((t) => [t, 0])));
  });

  it('refuses a file that is not a Baton database of the current schema, with exit 2', async () => {
    const folder = tempDir('baton-migrate-bad-');
    const foreign = join(folder, 'other.db');
    const db = new Database(foreign);
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)');
    db.close();
    const old = join(folder, 'old.db');
    const oldDb = new Database(old);
    oldDb.exec(
      "CREATE TABLE baton_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO baton_meta VALUES ('app', 'baton'), ('schema_version', '2')",
    );
    oldDb.close();
    const text = join(folder, 'notes.txt');
    writeFileSync(text, 'just some text, not a database at all\n'.repeat(100));
    const cases: [string, RegExp][] = [
      [foreign, /other\.db: not a Baton database \(tables: notes\)/],
      [
        old,
        new RegExp(
          `old\\.db: schema version 2, but this Baton migrates only version ${SQLITE_SCHEMA_VERSION}; upgrade it first`,
        ),
      ],
      [text, /notes\.txt: not a readable Baton database/],
      [join(folder, 'missing.db'), /missing\.db: no such file/],
    ];
    for (const [file, message] of cases) {
      const before = existsSync(file) ? readFileSync(file) : null;
      const result = expectExit(await baton(['migrate', '--from', file, '--to', urlFor(schema)]), 2);
      expect(result.stderr).toMatch(message);
      if (before) expect(readFileSync(file).equals(before)).toBe(true);
    }
  }, 30_000);

  it('never shows the password, also when the server cannot be reached', async () => {
    const closed = urlFor(freshSchemaName('mig')).replace(`:${server.port}/`, ':1/');
    const unreachable = expectExit(await baton(['migrate', '--from', dbPath, '--to', closed]), 2);
    expect(unreachable.stderr).toContain('cannot use the PostgreSQL database at 127.0.0.1:1');
    expect(unreachable.stderr).toContain('postgres:***@');
    const notPg = expectExit(
      await baton(['migrate', '--from', dbPath, '--to', `mysql://u:${PASSWORD}@h/db`]),
      2,
    );
    expect(notPg.stderr).toContain('--to: "mysql://u:***@h/db" is not a PostgreSQL URL');
    expect(outputs.length).toBeGreaterThan(20);
    for (const result of outputs) {
      expect(result.stdout).not.toContain(PASSWORD);
      expect(result.stderr).not.toContain(PASSWORD);
    }
  }, 30_000);
});
