/**
 * Flow control across worker processes: three `baton worker` processes (the built CLI) share one
 * store, SQLite file or PostgreSQL schema, and a limit set with `baton flow set` on the `claude`
 * key. Every step runs a fixture installed as an executable named `claude`, so the key comes from
 * the agent command itself; it records when it started and ended. However the workers interleave,
 * never more than the limit run at once, and never more than the rate start in any window.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { startRun } from '../src/engine/start-run.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { installNpmCli } from './helpers/agent-world.js';
import {
  type BatonProcess,
  expectExit,
  fixture,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  tempDir,
  waitFor,
} from './helpers/cli.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

const WORKERS = 3;

let server: TestPostgres;

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterEach(async () => {
  await stopProcesses();
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

interface Setup {
  dir: string;
  home: string;
  /** `--store <url>` for PostgreSQL; none for the SQLite file in the home folder. */
  storeArgs: string[];
  openStore: () => Promise<Store>;
  flowFile: string;
  claude: string;
}

function setup(kind: 'sqlite' | 'postgres'): Setup {
  const dir = tempDir('baton-flow-');
  const home = join(dir, 'home');
  // The fixture as an executable named `claude`: its flow key is the command's base name.
  // Installed where npm puts claude: the policy and the profile take it for claude.
  const source = readFileSync(fixture('agent-flow'), 'utf8').replace(/^#!.*\n/, '');
  const claude = installNpmCli(dir, 'claude', `#!${process.execPath}\n${source}`);
  if (kind === 'sqlite') {
    return {
      dir,
      home,
      storeArgs: [],
      openStore: async () => SqliteStore.open(join(home, 'baton.db')),
      flowFile: join(dir, 'flow'),
      claude,
    };
  }
  const schema = freshSchemaName('flow');
  const url = `${server.url}?schema=${schema}`;
  return {
    dir,
    home,
    storeArgs: ['--store', url],
    openStore: () => PostgresStore.open(server.url, { schema }),
    flowFile: join(dir, 'flow'),
    claude,
  };
}

/** `runs` runs of one agent step each, stored in process. */
async function createRuns(s: Setup, runs: number): Promise<string[]> {
  const plan = validatePlanObject(
    {
      name: 'flow',
      defaults: { agent: { command: [s.claude] } },
      steps: [{ id: 'ask', instruction: 'answer' }],
    },
    'flow',
  );
  const store = await s.openStore();
  const ids = Array.from({ length: runs }, (_, i) => `r${String(i).padStart(3, '0')}`);
  try {
    for (const runId of ids) await startRun(store, { plan, runId, workspace: s.dir });
  } finally {
    await store.close();
  }
  return ids;
}

async function startWorkers(s: Setup, sleepMs: number, concurrency: number): Promise<BatonProcess[]> {
  return Promise.all(
    Array.from({ length: WORKERS }, async () => {
      const proc = spawnBaton([...s.storeArgs, 'worker', '--quiet', '--concurrency', String(concurrency)], {
        home: s.home,
        env: { FLOW_FILE: s.flowFile, SLEEP_MS: String(sleepMs) },
      });
      await waitFor(
        () => proc.stderr().includes('watching') || proc.child.exitCode !== null,
        20_000,
        'worker',
      );
      if (proc.child.exitCode !== null) throw new Error(`worker exited: ${proc.stderr()}`);
      return proc;
    }),
  );
}

interface Span {
  runId: string;
  /** The pid of the worker that ran the agent (its parent). */
  worker: string;
  start: number;
  end: number;
}

/** Waits until every run's agent has ended once; returns their spans (each run exactly once). */
async function waitForSpans(s: Setup, runIds: readonly string[], timeoutMs: number): Promise<Span[]> {
  const parse = () => {
    let text = '';
    try {
      text = readFileSync(s.flowFile, 'utf8');
    } catch {
      return [];
    }
    return text
      .trim()
      .split('\n')
      .map((line) => line.split(' '))
      .map(([what, at, runId, , pid, worker]) => ({
        what: what!,
        at: Number(at),
        runId: runId!,
        pid: pid!,
        worker: worker!,
      }));
  };
  await waitFor(
    () => parse().filter((line) => line.what === 'end').length >= runIds.length,
    timeoutMs,
    'every agent to end',
    100,
  );
  const lines = parse();
  const starts = lines.filter((line) => line.what === 'start');
  // Each run's step ran exactly once.
  expect(starts.map((line) => line.runId).sort()).toEqual([...runIds].sort());
  return starts.map((start) => ({
    runId: start.runId,
    worker: start.worker,
    start: start.at,
    end: lines.find((line) => line.what === 'end' && line.pid === start.pid)!.at,
  }));
}

/** The most agents alive at once. */
function maxOverlap(spans: readonly Span[]): number {
  const points = spans.flatMap((span) => [
    { at: span.start, delta: 1 },
    { at: span.end, delta: -1 },
  ]);
  // An end and a start at the same millisecond: the end first (they did not overlap).
  points.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let most = 0;
  for (const point of points) {
    now += point.delta;
    most = Math.max(most, now);
  }
  return most;
}

/** The most of `times` within any `windowMs`. */
function maxWithin(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  return Math.max(...sorted.map((at) => sorted.filter((t) => t >= at && t < at + windowMs).length));
}

/**
 * Samples, every few ms until stopped, how many steps the store counts as running under `claude`
 * (what the workers admit against), from a store handle of its own.
 */
function sampleRunning(s: Setup): { stop: () => Promise<number[]> } {
  const samples: number[] = [];
  let stopped = false;
  const loop = (async () => {
    const store = await s.openStore();
    try {
      while (!stopped) {
        const claude = (await store.listFlowLimits(Date.now())).find((limit) => limit.key === 'claude');
        samples.push(claude?.running ?? 0);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    } finally {
      await store.close();
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return samples;
    },
  };
}

/** When each run's step was claimed (its step.started event, at the claiming worker's clock). */
async function claimTimes(s: Setup, runIds: readonly string[]): Promise<number[]> {
  const store = await s.openStore();
  try {
    const times: number[] = [];
    for (const runId of runIds) {
      for (const event of await store.getEvents(runId))
        if (event.type === 'step.started') times.push(event.at);
    }
    return times;
  } finally {
    await store.close();
  }
}

/** When each run's (single) step was claimed. */
async function claimTimesByRun(s: Setup, runIds: readonly string[]): Promise<Map<string, number>> {
  const store = await s.openStore();
  try {
    const times = new Map<string, number>();
    for (const runId of runIds) {
      const started = (await store.getEvents(runId)).find((event) => event.type === 'step.started');
      if (started) times.set(runId, started.at);
    }
    return times;
  } finally {
    await store.close();
  }
}

async function expectAllSucceeded(s: Setup, runIds: readonly string[]): Promise<void> {
  const store = await s.openStore();
  try {
    await waitFor(
      async () => {
        const runs = await store.listRuns({ status: 'succeeded' });
        return runs.length === runIds.length;
      },
      20_000,
      'every run to succeed',
      100,
    );
  } finally {
    await store.close();
  }
}

describe.each(['sqlite', 'postgres'] as const)('flow control across %s workers', (kind) => {
  it('never runs more than the concurrency limit at once, however many workers claim', async () => {
    const s = setup(kind);
    expectExit(
      await runBaton([...s.storeArgs, 'flow', 'set', 'claude', '--concurrency', '2'], { home: s.home }),
      0,
    );
    const runIds = await createRuns(s, 12);
    const sampler = sampleRunning(s);
    // One step at a time per worker: three workers could run three, the limit allows two.
    const workers = await startWorkers(s, 400, 1);
    const spans = await waitForSpans(s, runIds, 60_000);
    await expectAllSucceeded(s, runIds);
    const counted = await sampler.stop();
    // The limit held, and was used: two agents at a time, never three, and never more than two
    // counted as running by the store (claim to commit, which holds the agent's whole life).
    expect(maxOverlap(spans)).toBe(2);
    expect(Math.max(...counted)).toBe(2);
    // Two at once means two workers at once: the limit held across processes, not inside one.
    expect(new Set(spans.map((span) => span.worker)).size).toBeGreaterThanOrEqual(2);
    const listed = await runBaton([...s.storeArgs, 'flow', 'list', '--json'], { home: s.home });
    expect(JSON.parse(expectExit(listed, 0).stdout)).toMatchObject([
      { key: 'claude', concurrency: 2, running: 0 },
    ]);
    for (const worker of workers) worker.child.kill('SIGTERM');
    await Promise.all(workers.map((worker) => worker.exited));
  }, 90_000);

  it('never starts more than the rate in any window, across workers', async () => {
    const s = setup(kind);
    expectExit(
      await runBaton([...s.storeArgs, 'flow', 'set', 'claude', '--rate', '3/2s'], { home: s.home }),
      0,
    );
    const runIds = await createRuns(s, 9);
    await startWorkers(s, 50, 4);
    const spans = await waitForSpans(s, runIds, 60_000);
    await expectAllSucceeded(s, runIds);
    // Starts are admitted at claim time, which the step.started events record: never more than 3
    // in any 2 s. An agent's own start lags its claim by its spawn, which a loaded machine makes
    // arbitrarily long, so the agents are checked only to start after their admission.
    const claimed = await claimTimes(s, runIds);
    expect(claimed).toHaveLength(9);
    expect(maxWithin(claimed, 2000)).toBe(3);
    const claimedAt = await claimTimesByRun(s, runIds);
    for (const span of spans) expect(span.start).toBeGreaterThanOrEqual(claimedAt.get(span.runId)!);
    // Nine starts at three per 2 s need two full windows after the first one.
    expect(Math.max(...claimed) - Math.min(...claimed)).toBeGreaterThanOrEqual(4000);
  }, 90_000);
});
