/**
 * Interruptions have their own budget (retry.maxInterruptions): `baton worker` processes are
 * SIGKILLed in the middle of one long agent step, on SQLite and on a real PostgreSQL cluster. The
 * dead workers' attempts end `interrupted` when their lease runs out and do not spend maxAttempts;
 * past the interruption budget the step is blocked with a reason naming it.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentCommand,
  attempts,
  type BatonProcess,
  expectExit,
  readCounts,
  removeTempDirs,
  runBaton,
  type runStatus,
  spawnBaton,
  stopAgentsAfterEach,
  tempDir,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

const countFiles = stopAgentsAfterEach();
let server: TestPostgres | undefined;

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

interface Setup {
  home: string;
  countFile: string;
  /** `--store <url>` for PostgreSQL, nothing for the home's SQLite file. */
  storeArgs: string[];
}

function setup(postgres: boolean): Setup & { dir: string } {
  const dir = tempDir('baton-interrupt-');
  const countFile = join(dir, 'counts');
  countFiles.push(countFile);
  const storeArgs = postgres ? ['--store', `${server!.url}?schema=${freshSchemaName('i')}`] : [];
  return { dir, home: join(dir, 'home'), countFile, storeArgs };
}

/** One long agent step (the counting fixture, sleeping SLEEP_MS as the worker's environment says). */
async function storeRun(s: Setup & { dir: string }, retry?: Record<string, number>): Promise<void> {
  const file = writePlan(s.dir, {
    name: 'long-step',
    defaults: { agent: { command: agentCommand('agent-count') }, ...(retry ? { retry } : {}) },
    steps: [{ id: 'long', instruction: 'a long step' }],
  });
  expectExit(await runBaton([...s.storeArgs, 'run', file, '--id', 'r', '--detach'], { home: s.home }), 0);
}

function startWorker(s: Setup, sleepMs: number): BatonProcess {
  // A short lease: a dead worker's attempt is reclaimed a second after it stopped renewing.
  return spawnBaton([...s.storeArgs, 'worker', '--lease', '1s'], {
    home: s.home,
    env: { COUNT_FILE: s.countFile, SLEEP_MS: String(sleepMs) },
  });
}

/** Starts a worker, waits until its agent has started the step, and SIGKILLs the worker. */
async function killMidStep(s: Setup, runsBefore: number): Promise<void> {
  const worker = startWorker(s, 120_000);
  await waitFor(() => readCounts(s.countFile).length > runsBefore, 30_000, `agent run ${runsBefore + 1}`);
  worker.child.kill('SIGKILL');
  expect((await worker.exited).signal).toBe('SIGKILL');
}

async function statusOf(s: Setup) {
  const result = await runBaton([...s.storeArgs, 'status', 'r', '--json'], { home: s.home });
  return JSON.parse(result.stdout) as Awaited<ReturnType<typeof runStatus>>;
}

describe('a step whose workers are killed', () => {
  it('runs to success after three worker kills with the default retry policy (SQLite)', async () => {
    const s = setup(false);
    await storeRun(s);
    for (let kill = 0; kill < 3; kill++) await killMidStep(s, kill);
    const last = startWorker(s, 0);
    await waitFor(async () => (await statusOf(s)).status !== 'running', 30_000, 'the run to settle', 200);
    last.child.kill('SIGTERM');
    const run = await statusOf(s);
    expect(run.status, JSON.stringify(run.steps[0])).toBe('succeeded');
    expect(readCounts(s.countFile)).toHaveLength(4);
    const outcomes = (await attempts(s.home, 'r', 'long')).map((a) => a.outcome);
    expect(outcomes).toEqual(['interrupted', 'interrupted', 'interrupted', 'succeeded']);
  }, 60_000);

  it('on PostgreSQL: interruptions spend no tries (maxAttempts 1), and their budget blocks the step', async () => {
    const s = setup(true);
    await storeRun(s, { maxAttempts: 1, maxInterruptions: 1 });
    await killMidStep(s, 0);
    // Before interruptions had a budget of their own, this reclaim blocked the step: 1 of 1 tries.
    await killMidStep(s, 1);
    startWorker(s, 0);
    await waitFor(async () => (await statusOf(s)).status !== 'running', 30_000, 'the run to settle', 200);
    const run = await statusOf(s);
    expect(run.status).toBe('blocked');
    expect(run.steps[0]?.blockedReason).toMatch(/^interrupted 2 times \(retry\.maxInterruptions 1\)/);
    expect(readCounts(s.countFile)).toHaveLength(2);
  }, 60_000);
});
