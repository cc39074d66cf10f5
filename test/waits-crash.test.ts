/**
 * Steps that wait, against real processes of the built CLI: a waiting run survives SIGKILL of every
 * Baton process and a restart (and a PostgreSQL restart) and is approved afterwards; two
 * `baton check`s and a worker racing with two approvals (or two sends) of the same step apply it
 * once. Executions are counted by the fixture agent (COUNT_FILE), not by the store.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { startRun } from '../src/engine/start-run.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import {
  agentCommand,
  type BatonProcess,
  countByStep,
  readCounts,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  tempDir,
  waitFor,
} from './helpers/cli.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

const TEST_TIMEOUT = 120_000;

/** Where the runs live: the embedded SQLite store of a home, or a PostgreSQL schema. */
interface Target {
  dir: string;
  home: string;
  countFile: string;
  /** `--store <url>` for PostgreSQL, nothing for SQLite. */
  storeArgs: string[];
  open(): Promise<Store>;
}

function sqliteTarget(): Target {
  const dir = tempDir('baton-waits-crash-');
  const home = join(dir, 'home');
  return {
    dir,
    home,
    countFile: join(dir, 'counts'),
    storeArgs: [],
    open: async () => SqliteStore.open(join(home, 'baton.db')),
  };
}

function postgresTarget(server: TestPostgres): Target {
  const dir = tempDir('baton-waits-pg-');
  const schema = freshSchemaName('waits');
  return {
    dir,
    home: join(dir, 'home'),
    countFile: join(dir, 'counts'),
    storeArgs: ['--store', `${server.url}?schema=${schema}`],
    open: () => PostgresStore.open(server.url, { schema }),
  };
}

/** draft -> approve-send (waits for approval) -> send; and build -> deployed (waits for an event) -> announce. */
function waitPlan() {
  return validatePlanObject(
    {
      name: 'waits',
      defaults: {
        agent: { command: agentCommand('agent-count') },
        retry: { maxAttempts: 3, initialDelayMs: 20, maxDelayMs: 100 },
      },
      steps: [
        { id: 'draft', instruction: 'draft' },
        { id: 'approve-send', dependsOn: ['draft'], wait: { for: 'approval', prompt: 'Send?' } },
        { id: 'send', instruction: 'send', dependsOn: ['approve-send'] },
        { id: 'build', instruction: 'build' },
        { id: 'deployed', dependsOn: ['build'], wait: { for: 'event', event: 'deployed-{{run.id}}' } },
        { id: 'announce', instruction: 'announce', dependsOn: ['deployed'] },
      ],
    },
    'waits',
  );
}

async function startRuns(target: Target, runIds: readonly string[]): Promise<void> {
  const store = await target.open();
  try {
    for (const runId of runIds) await startRun(store, { plan: waitPlan(), runId, workspace: target.dir });
  } finally {
    await store.close();
  }
}

async function startWorker(target: Target): Promise<BatonProcess> {
  const proc = spawnBaton([...target.storeArgs, 'worker', '--quiet'], {
    home: target.home,
    env: { COUNT_FILE: target.countFile },
  });
  await waitFor(() => proc.stderr().includes('watching') || proc.child.exitCode !== null, 20_000, 'worker');
  if (proc.child.exitCode !== null) throw new Error(`worker exited: ${proc.stderr()}`);
  return proc;
}

/** Resolves once every run's wait steps wait (or `status` for each of `steps`). */
async function stepsReach(target: Target, runIds: readonly string[], status: string, steps: string[]) {
  const store = await target.open();
  try {
    await waitFor(
      async () => {
        for (const runId of runIds) {
          const run = await store.getRun(runId);
          for (const stepId of steps)
            if (run?.steps.find((s) => s.stepId === stepId)?.status !== status) return false;
        }
        return true;
      },
      60_000,
      `${steps.join(', ')} ${status}`,
    );
  } finally {
    await store.close();
  }
}

async function eventsOf(target: Target, runId: string, type: string) {
  const store = await target.open();
  try {
    return (await store.getEvents(runId)).filter((e) => e.type === type);
  } finally {
    await store.close();
  }
}

const baton = (target: Target, args: string[]) =>
  runBaton([...target.storeArgs, ...args], { home: target.home, env: { COUNT_FILE: target.countFile } });

/** A waiting run outlives every Baton process, then is approved and sent its event. */
async function survivesKillAndRestart(target: Target, restart: () => Promise<void>): Promise<void> {
  await startRuns(target, ['r1']);
  const worker = await startWorker(target);
  await stepsReach(target, ['r1'], 'waiting', ['approve-send', 'deployed']);
  worker.child.kill('SIGKILL');
  await worker.exited;
  await restart();
  // Nothing is due: a check after the restart leaves the waits as they are.
  expect((await baton(target, ['check'])).code).toBe(0);
  await stepsReach(target, ['r1'], 'waiting', ['approve-send', 'deployed']);
  const again = await startWorker(target);
  expect((await baton(target, ['approve', 'r1', 'approve-send', '--comment', 'after the crash'])).code).toBe(
    0,
  );
  expect((await baton(target, ['send', 'deployed-r1', '--data', '{"ok":true}'])).code).toBe(0);
  await stepsReach(target, ['r1'], 'succeeded', ['send', 'announce']);
  again.child.kill('SIGKILL');
  const counts = countByStep(readCounts(target.countFile));
  expect(Object.fromEntries(counts)).toEqual(onceEach(['r1']));
}

/**
 * Two checks, a worker, two approvals and two sends of each run's steps, all at once: every
 * approval and event is applied once, and the steps after them run once.
 */
async function racesApplyOnce(target: Target): Promise<void> {
  const runIds = ['r1', 'r2', 'r3'];
  await startRuns(target, runIds);
  // The first steps run, so the waits are due to start when the racers come.
  expect((await baton(target, ['check'])).code).toBe(0);
  const racers = [
    spawnBaton([...target.storeArgs, 'worker', '--quiet'], {
      home: target.home,
      env: { COUNT_FILE: target.countFile },
    }),
  ];
  const commands = [
    ['check'],
    ['check'],
    ...runIds.flatMap((runId) => [
      ['approve', runId, 'approve-send'],
      ['approve', runId, 'approve-send'],
      ['send', `deployed-${runId}`, '--run', runId, '--data', `"${runId}"`],
      ['send', `deployed-${runId}`, '--run', runId, '--data', `"${runId}"`],
    ]),
  ];
  const results = await Promise.all(commands.map((args) => baton(target, args)));
  for (const [index, result] of results.entries())
    expect([0, 2], `${commands[index]!.join(' ')}: ${result.stderr}`).toContain(result.code);
  await stepsReach(target, runIds, 'succeeded', ['send', 'announce']);
  for (const racer of racers) racer.child.kill('SIGKILL');
  for (const runId of runIds) {
    expect(await eventsOf(target, runId, 'step.approved')).toHaveLength(1);
    expect(await eventsOf(target, runId, 'event.received')).toHaveLength(1);
  }
  const approvals = results.filter((r, i) => commands[i]![0] === 'approve' && r.code === 0);
  expect(approvals).toHaveLength(runIds.length);
  const counts = countByStep(readCounts(target.countFile));
  expect(Object.fromEntries(counts)).toEqual(onceEach(runIds));
}

/** Every agent step of these runs ran exactly once (keys as countByStep gives them). */
function onceEach(runIds: readonly string[]): Record<string, number> {
  return Object.fromEntries(
    runIds.flatMap((runId) => ['draft', 'send', 'build', 'announce'].map((step) => [`${runId} ${step}`, 1])),
  );
}

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

describe('waiting steps across crashes and races: SQLite', () => {
  it(
    'a waiting run survives SIGKILL of every Baton process and a restart, and is approved afterwards',
    async () => {
      await survivesKillAndRestart(sqliteTarget(), async () => undefined);
    },
    TEST_TIMEOUT,
  );

  it(
    'two checks and a worker racing with two approvals and two sends apply each once',
    async () => {
      await racesApplyOnce(sqliteTarget());
    },
    TEST_TIMEOUT,
  );
});

describe('waiting steps across crashes and races: PostgreSQL', () => {
  let server: TestPostgres;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it(
    'a waiting run survives SIGKILL of every Baton process and a PostgreSQL restart, and is approved afterwards',
    async () => {
      await survivesKillAndRestart(postgresTarget(server), () => server.restart());
    },
    TEST_TIMEOUT,
  );

  it(
    'two checks and a worker racing with two approvals and two sends apply each once',
    async () => {
      await racesApplyOnce(postgresTarget(server));
    },
    TEST_TIMEOUT,
  );
});
