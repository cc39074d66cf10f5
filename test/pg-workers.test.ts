/**
 * Many `baton worker --store postgres://...` processes (the built CLI) on one PostgreSQL 15 cluster:
 * they share the work without double claims, survive a SIGKILLed peer, a server restart and
 * terminated connections, and an idle one wakes on NOTIFY rather than at its slow poll.
 * Every step is an agent step running the counting fixture, so executions are counted by the
 * processes that ran them, not by the store.
 */
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { startRun } from '../src/engine/start-run.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import {
  agentCommand,
  type BatonProcess,
  countByStep,
  expectExit,
  isAlive,
  killAgents,
  readCounts,
  removeTempDirs,
  runBaton,
  sleep,
  spawnBaton,
  stopProcesses,
  tempDir,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

/**
 * Runs of the main workload. Each step starts a Node process (about 120 ms of CPU here), so the
 * 500 runs x 5 steps of the issue (2,500 agents, about 4 minutes on this 2-core machine) are scaled
 * down by default (40 runs: 200 agents, enough for 4 workers to contend for every claim, within the
CI run's time budget); BATON_PG_TEST_RUNS=500 runs the full size.
 */
const WORKLOAD_RUNS = Number(process.env.BATON_PG_TEST_RUNS ?? 40);
/** About 10 agent steps a second fit here: half a second per run of 5 steps, with room to spare. */
const WORKLOAD_TIMEOUT_MS = 60_000 + WORKLOAD_RUNS * 1500;
const STEPS = ['s1', 's2', 's3', 's4', 's5'];
const WORKERS = 4;

let server: TestPostgres;
let admin: pg.Pool;

beforeAll(async () => {
  server = await startPostgres();
  admin = new pg.Pool({ connectionString: server.url, max: 2 });
  admin.on('error', () => undefined);
}, 60_000);

afterEach(async () => {
  await stopProcesses();
});

afterAll(async () => {
  await admin?.end();
  await server?.stop();
  removeTempDirs();
});

/** A chain s1 -> ... -> s5 of agent steps running the counting fixture. */
function chainPlan(name = 'pg-chain') {
  return validatePlanObject(
    {
      name,
      defaults: {
        agent: { command: agentCommand('agent-count') },
        retry: { maxAttempts: 5, initialDelayMs: 50, maxDelayMs: 200 },
      },
      steps: STEPS.map((id, i) => ({ id, instruction: id, ...(i > 0 ? { dependsOn: [STEPS[i - 1]] } : {}) })),
    },
    name,
  );
}

interface Workload {
  schema: string;
  url: string;
  dir: string;
  home: string;
  countFile: string;
  runIds: string[];
}

/** A fresh schema and folder; `runs` runs of the chain stored through PostgresStore (fast, in process). */
async function createWorkload(runs: number, urlParams = ''): Promise<Workload> {
  const schema = freshSchemaName('w');
  const dir = tempDir('baton-pg-workers-');
  const store = await PostgresStore.open(server.url, { schema });
  const plan = chainPlan();
  const runIds = Array.from({ length: runs }, (_, i) => `r${String(i).padStart(4, '0')}`);
  try {
    for (const runId of runIds) await startRun(store, { plan, runId, workspace: dir });
  } finally {
    await store.close();
  }
  return {
    schema,
    url: `${server.url}?schema=${schema}${urlParams}`,
    dir,
    home: join(dir, 'home'),
    countFile: join(dir, 'counts'),
    runIds,
  };
}

/** A worker process on the workload's schema; resolves once it has opened the store. */
async function startWorker(
  work: Pick<Workload, 'url' | 'home' | 'countFile'>,
  args: string[] = [],
  env: Record<string, string> = {},
  url = work.url,
): Promise<BatonProcess> {
  const proc = spawnBaton(['--store', url, 'worker', '--quiet', ...args], {
    home: work.home,
    env: { COUNT_FILE: work.countFile, ...env },
  });
  await waitFor(() => proc.stderr().includes('watching') || proc.child.exitCode !== null, 20_000, 'worker');
  if (proc.child.exitCode !== null) throw new Error(`worker exited: ${proc.stderr()}`);
  return proc;
}

const query = async <T extends pg.QueryResultRow>(schema: string, sql: string, values: unknown[] = []) =>
  (await admin.query<T>(sql.replaceAll('S.', `"${schema}".`), values)).rows;

async function runStatuses(schema: string): Promise<Record<string, number>> {
  const rows = await query<{ status: string; n: number }>(
    schema,
    'SELECT status, count(*)::int AS n FROM S.runs GROUP BY status',
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

async function succeededSteps(schema: string): Promise<number> {
  const [row] = await query<{ n: number }>(
    schema,
    "SELECT count(*)::int AS n FROM S.steps WHERE status = 'succeeded'",
  );
  return row?.n ?? 0;
}

/** Waits until every run succeeded (failing early on a run that ended otherwise). */
async function waitAllSucceeded(work: Workload, timeoutMs: number): Promise<void> {
  await waitFor(
    async () => {
      const statuses = await runStatuses(work.schema);
      const ended = Object.entries(statuses).filter(([s]) => s !== 'running' && s !== 'succeeded');
      if (ended.length > 0) throw new Error(`runs ended badly: ${JSON.stringify(statuses)}`);
      return statuses.succeeded === work.runIds.length;
    },
    timeoutMs,
    'every run to succeed',
    200,
  );
}

/** Stops workers with SIGTERM (graceful) and expects each to exit 0. */
async function stopGracefully(workers: readonly BatonProcess[]): Promise<void> {
  for (const worker of workers) worker.child.kill('SIGTERM');
  for (const worker of workers) {
    const { code, signal } = await worker.exited;
    expect({ code, signal, stderr: code === 0 ? '' : worker.stderr() }).toEqual({
      code: 0,
      signal: null,
      stderr: '',
    });
  }
}

/** The attempt rows: no attempt was started twice; returns them. */
async function attemptRows(schema: string) {
  const doubleStarts = await query(
    schema,
    `SELECT run_id, step_id, data->>'attempt' AS attempt FROM S.events WHERE type = 'step.started'
     GROUP BY 1, 2, 3 HAVING count(*) > 1`,
  );
  expect(doubleStarts).toEqual([]);
  return query<{
    run_id: string;
    step_id: string;
    attempt: number;
    owner: string;
    outcome: string;
    ended_at: number;
  }>(schema, 'SELECT run_id, step_id, attempt, owner, outcome, ended_at FROM S.attempts');
}

const ownerOf = (worker: BatonProcess) => (owner: string) => owner.includes(`:${worker.pid}:`);

describe('baton worker processes on PostgreSQL', () => {
  it(
    `share ${WORKLOAD_RUNS} runs of 5 agent steps among ${WORKERS} workers: each step runs once`,
    async () => {
      const work = await createWorkload(0);
      const workers = await Promise.all(
        Array.from({ length: WORKERS }, () => startWorker(work, ['--concurrency', '4'])),
      );
      // Created while the workers are idle: they learn of the runs by NOTIFY.
      const store = await PostgresStore.open(server.url, { schema: work.schema });
      const plan = chainPlan();
      const started = Date.now();
      try {
        for (let i = 0; i < WORKLOAD_RUNS; i++) {
          const runId = `r${String(i).padStart(4, '0')}`;
          work.runIds.push(runId);
          await startRun(store, { plan, runId, workspace: work.dir });
        }
      } finally {
        await store.close();
      }
      await waitAllSucceeded(work, WORKLOAD_TIMEOUT_MS - 30_000);
      const seconds = (Date.now() - started) / 1000;
      console.info(
        `${WORKLOAD_RUNS * STEPS.length} agent steps on ${WORKERS} workers in ${seconds.toFixed(1)} s ` +
          `(${((WORKLOAD_RUNS * STEPS.length) / seconds).toFixed(1)} steps/s)`,
      );
      await stopGracefully(workers);

      const lines = readCounts(work.countFile);
      const counts = countByStep(lines);
      expect(counts.size).toBe(WORKLOAD_RUNS * STEPS.length);
      const repeated = [...counts].filter(([, n]) => n !== 1);
      expect(repeated).toEqual([]);
      expect(lines.every((line) => line.attempt === 1)).toBe(true);
      const attempts = await attemptRows(work.schema);
      expect(attempts).toHaveLength(WORKLOAD_RUNS * STEPS.length);
      expect(attempts.every((a) => a.outcome === 'succeeded')).toBe(true);
      // Every worker took part.
      for (const worker of workers) expect(attempts.some((a) => ownerOf(worker)(a.owner))).toBe(true);
    },
    WORKLOAD_TIMEOUT_MS,
  );

  it('reclaims the steps of a SIGKILLed worker after its lease; committed steps never run again', async () => {
    const work = await createWorkload(30);
    // Long enough that a live worker starved of CPU on a loaded 2-core machine still renews in
    // time (renewals come every third of it): only the dead worker's leases may lapse.
    const lease = ['--lease', '4s', '--concurrency', '4'];
    const env = { SLEEP_MS: '300' };
    const workers = await Promise.all(Array.from({ length: WORKERS }, () => startWorker(work, lease, env)));
    const victim = workers[0]!;
    const total = work.runIds.length * STEPS.length;
    await waitFor(async () => (await succeededSteps(work.schema)) >= total * 0.3, 60_000, '30% of the steps');
    victim.child.kill('SIGKILL');
    await victim.exited;
    // What the dead worker held: its leases, still 'running' (it can no longer commit or renew).
    const inFlight = await query<{ run_id: string; step_id: string }>(
      work.schema,
      "SELECT run_id, step_id FROM S.steps WHERE status = 'running' AND lease_owner LIKE $1",
      [`%:${victim.pid}:%`],
    );
    expect(inFlight.length).toBeGreaterThan(0);
    await waitAllSucceeded(work, 90_000);
    await stopGracefully(workers.slice(1));

    const lines = readCounts(work.countFile);
    killAgents(lines);
    const counts = countByStep(lines);
    const held = new Set(inFlight.map((row) => `${row.run_id} ${row.step_id}`));
    const twice = [...counts.values()].filter((n) => n > 1).length;
    console.info(`SIGKILL: ${held.size} steps in flight at the kill, ${twice} of them ran a second time`);
    expect(counts.size).toBe(total);
    for (const [key, n] of counts) {
      // At most one extra execution, and only for a step the dead worker held.
      expect({ key, n }).toEqual({ key, n: held.has(key) ? expect.toBeOneOf([1, 2]) : 1 });
    }
    const attempts = await attemptRows(work.schema);
    const isVictim = ownerOf(victim);
    for (const key of held) {
      const [run, step] = key.split(' ');
      const forStep = attempts.filter((a) => a.run_id === run && a.step_id === step);
      // Interrupted (reclaimed after the lease), then finished by another worker.
      expect(forStep.find((a) => isVictim(a.owner))?.outcome).toBe('interrupted');
      const done = forStep.find((a) => a.outcome === 'succeeded');
      expect(done && !isVictim(done.owner)).toBe(true);
    }
    // Nothing the dead worker committed ran again.
    for (const a of attempts.filter((a) => isVictim(a.owner) && a.outcome === 'succeeded'))
      expect(counts.get(`${a.run_id} ${a.step_id}`)).toBe(1);
  }, 150_000);

  it('keeps going across pg_ctl restart in the middle of a workload: nothing is lost', async () => {
    const work = await createWorkload(30);
    const args = ['--lease', '3s', '--concurrency', '4'];
    const workers = await Promise.all(
      Array.from({ length: WORKERS }, () => startWorker(work, args, { SLEEP_MS: '100' })),
    );
    const total = work.runIds.length * STEPS.length;
    await waitFor(
      async () => (await succeededSteps(work.schema)) >= total * 0.25,
      60_000,
      '25% of the steps',
    );
    const before = await succeededSteps(work.schema);
    await server.restart();
    for (const worker of workers) expect(isAlive(worker.pid)).toBe(true);
    await waitAllSucceeded(work, 120_000);
    expect(before).toBeLessThan(total);
    for (const worker of workers) expect(isAlive(worker.pid)).toBe(true);
    await stopGracefully(workers);
    const counts = countByStep(readCounts(work.countFile));
    // Every step ran, and succeeded once. A step runs again only after an attempt of it that did not
    // succeed (a lease that ran out while the server was down, or on a loaded machine, is reclaimed
    // as interrupted): how many is the machine's timing, that each one is accounted for is not.
    expect(counts.size).toBe(total);
    const again = [...counts.values()].filter((n) => n > 1).length;
    const retried = workers.filter((worker) => worker.stderr().includes('retrying')).length;
    console.info(
      `server restart: ${retried} of ${WORKERS} workers retried a failed cycle; ${again} of ${total} steps ran twice`,
    );
    const attempts = await attemptRows(work.schema);
    for (const [key, n] of counts) {
      const forStep = attempts.filter((a) => `${a.run_id} ${a.step_id}` === key);
      const outcomes = forStep.map((a) => a.outcome);
      expect({ key, succeeded: outcomes.filter((o) => o === 'succeeded').length }).toEqual({
        key,
        succeeded: 1,
      });
      // Each execution after the first follows an attempt of it that did not succeed.
      const unaccounted = n - 1 - outcomes.filter((o) => o !== 'succeeded').length;
      expect({ key, runs: n, unaccounted: Math.max(0, unaccounted) }).toEqual({
        key,
        runs: n,
        unaccounted: 0,
      });
    }
  }, 180_000);

  it("recovers when one worker's connections are terminated (pool and LISTEN)", async () => {
    const work = await createWorkload(30);
    const args = ['--lease', '3s', '--concurrency', '4'];
    const env = { SLEEP_MS: '100' };
    // The victim names its connections, so that only its backends are terminated.
    const victim = await startWorker(work, args, env, `${work.url}&application_name=baton_victim`);
    const others = await Promise.all(Array.from({ length: WORKERS - 1 }, () => startWorker(work, args, env)));
    const total = work.runIds.length * STEPS.length;
    const victimBackends = async () =>
      query<{ pid: number; query: string }>(
        work.schema,
        "SELECT pid, query FROM pg_stat_activity WHERE application_name = 'baton_victim'",
      );
    await waitFor(
      async () => (await succeededSteps(work.schema)) >= total * 0.25,
      60_000,
      '25% of the steps',
    );
    const terminated = Date.now();
    const [{ n }] = (
      await admin.query<{ n: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'baton_victim'`,
      )
    ).rows as [{ n: number }];
    expect(n).toBeGreaterThan(0);
    await waitAllSucceeded(work, 120_000);
    expect(isAlive(victim.pid)).toBe(true);
    // It committed work after losing its connections, and listens again.
    const attempts = await attemptRows(work.schema);
    const afterwards = attempts.filter((a) => ownerOf(victim)(a.owner) && a.ended_at > terminated);
    expect(afterwards.length).toBeGreaterThan(0);
    await waitFor(
      async () => (await victimBackends()).some((row) => /^LISTEN /.test(row.query)),
      10_000,
      'the victim to LISTEN again',
    );
    await stopGracefully([victim, ...others]);
    expect(countByStep(readCounts(work.countFile)).size).toBe(total);
  }, 180_000);

  it('wakes an idle worker by NOTIFY: a detached run is picked up long before the 30 s poll', async () => {
    const work = await createWorkload(0);
    const worker = await startWorker(work, [], {}, `${work.url}&application_name=baton_idle`);
    const plan = writePlan(work.dir, {
      name: 'pg-one',
      defaults: { agent: { command: agentCommand('agent-count') } },
      steps: [{ id: 'only', instruction: 'only' }],
    });
    /** Milliseconds since the idle worker last sent a statement other than LISTEN. */
    const quietMs = async () => {
      const [row] = await query<{ ms: number }>(
        work.schema,
        `SELECT (extract(epoch FROM now() - max(query_start)) * 1000)::int AS ms FROM pg_stat_activity
         WHERE application_name = 'baton_idle' AND query NOT LIKE 'LISTEN %'`,
      );
      return row?.ms ?? 0;
    };
    for (const runId of ['n1', 'n2']) {
      // Idle for real: not polling every second (the engine's default) but sleeping until notified.
      await sleep(2500);
      expect(await quietMs()).toBeGreaterThan(2000);
      const begun = Date.now();
      expectExit(
        await runBaton(['--store', work.url, 'run', plan, '--detach', '--id', runId], { home: work.home }),
        0,
      );
      await waitFor(
        async () =>
          (
            await query<{ status: string }>(work.schema, 'SELECT status FROM S.runs WHERE id = $1', [runId])
          )[0]?.status === 'succeeded',
        25_000,
        `run ${runId}`,
      );
      const [timing] = await query<{ created: number; started: number }>(
        work.schema,
        `SELECT r.created_at AS created, e.at AS started FROM S.runs r
         JOIN S.events e ON e.run_id = r.id AND e.type = 'step.started' WHERE r.id = $1`,
        [runId],
      );
      const pickupMs = timing!.started - timing!.created;
      console.info(
        `run ${runId}: claimed ${pickupMs} ms after it was stored; done ${Date.now() - begun} ms after baton run`,
      );
      // Not a speed test: the bound only tells NOTIFY (tens of ms, seconds on a loaded machine)
      // from the 30 s safety poll, the only other way an idle worker would have found the run.
      expect(pickupMs).toBeLessThan(20_000);
    }
    expect(countByStep(readCounts(work.countFile))).toEqual(
      new Map([
        ['n1 only', 1],
        ['n2 only', 1],
      ]),
    );
    await stopGracefully([worker]);
  }, 60_000);
});
