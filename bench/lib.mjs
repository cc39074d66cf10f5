// Shared helpers for the benchmark workloads. Benches measure the built code in dist/.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { validatePlanObject } from '../dist/core/plan/parse.js';
import { Engine } from '../dist/engine/engine.js';
import { startRun } from '../dist/engine/start-run.js';
import { FunctionExecutor, FunctionRegistry } from '../dist/executors/function-executor.js';
import { SqliteStore } from '../dist/store/sqlite/sqlite-store.js';

/** ~100 bytes, returned by every no-op step (its summary) and inserted by the floor. */
export const PAYLOAD = 'x'.repeat(100);

/** A fresh folder under os.tmpdir(); `dispose()` removes it. */
export function tempHome(label) {
  const dir = mkdtempSync(join(tmpdir(), `baton-bench-${label}-`));
  return { dir, dbPath: join(dir, 'baton.db'), dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A chain s1 -> s2 -> ... -> sN of `fn: noop` steps. */
export function chainPlan(name, length) {
  const steps = Array.from({ length }, (_, i) => ({
    id: `s${i + 1}`,
    fn: 'noop',
    ...(i > 0 ? { dependsOn: [`s${i}`] } : {}),
  }));
  return validatePlanObject(
    { name, limits: { concurrency: 1, maxSteps: Math.max(50, length * 2) }, steps },
    'bench',
  );
}

/** The store's defaults: WAL and synchronous=FULL. */
export function openStore(dbPath) {
  return SqliteStore.open(dbPath, { synchronous: process.env.BENCH_SYNC ?? 'FULL' });
}

/** Creates `count` runs of `plan`, ids r0001..; returns the ids. */
export async function createRuns(store, plan, count, workspace) {
  const ids = [];
  for (let i = 0; i < count; i++) {
    const runId = `r${String(i + 1).padStart(4, '0')}`;
    await startRun(store, { plan, runId, workspace });
    ids.push(runId);
  }
  return ids;
}

/** Executors for the engine: `noop` returns PAYLOAD; agent steps are not used by the benches. */
export function noopExecutors(onRun) {
  const registry = new FunctionRegistry().register('noop', (ctx) => {
    onRun?.(ctx);
    return PAYLOAD;
  });
  const fn = new FunctionExecutor(registry);
  const agent = {
    execute: async () => {
      throw new Error('bench plans have no agent steps');
    },
  };
  return { fn, agent };
}

/** Fails the workload loudly (non-zero exit through an uncaught error). */
export function assert(condition, message) {
  if (!condition) throw new Error(`bench assertion failed: ${message}`);
}

export const now = () => performance.now();

/** Peak resident set size of this process so far, in MB. */
export function peakRssMb() {
  return process.resourceUsage().maxRSS / 1024;
}

/** Each workload prints exactly one line `BENCH_RESULT <json>` for run-all.mjs to pick up. */
export function emit(result) {
  process.stdout.write(`BENCH_RESULT ${JSON.stringify({ ...result, peakRssMb: peakRssMb() })}\n`);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Runs `fn`; with BENCH_PROFILE=<dir> set, records a V8 CPU profile of just that phase (not the
 * set-up) to <dir>/<label>-<pid>.cpuprofile. Summarize it with `node bench/profile-top.mjs <dir> --dist`.
 */
export async function profiled(label, fn) {
  const dir = process.env.BENCH_PROFILE;
  if (!dir) return fn();
  const { Session } = await import('node:inspector/promises');
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${label}-${process.pid}.cpuprofile`), JSON.stringify(profile));
  }
}

/** A worker's loop on one store: each call commits the last claim and claims the next due step. */
export function claimer(store) {
  let pending = [];
  return async () => {
    const at = Date.now();
    const started = now();
    const { claimed } = await store.cycle({
      owner: 'bench',
      now: at,
      leaseMs: 30_000,
      completions: pending,
      claimLimit: 1,
      random: Math.random,
    });
    const ms = now() - started;
    assert(claimed.length === 1, `expected one claim, got ${claimed.length}`);
    pending = claimed.map((c) => ({
      runId: c.runId,
      stepId: c.stepId,
      attempt: c.attempt,
      owner: c.owner,
      outcome: { ok: true, summary: 'done', outputs: [] },
      startedAt: at,
      endedAt: Date.now(),
      logPath: null,
    }));
    return ms;
  };
}

export async function timed(fn) {
  const started = now();
  await fn();
  return now() - started;
}

/** An engine of no-op `fn` steps on `store`, as the rate workloads run it. */
export function noopEngine(store, dir, concurrency = 256) {
  return new Engine({
    store,
    executors: noopExecutors(),
    home: dir,
    owner: `bench:${process.pid}`,
    concurrency,
  });
}

/**
 * W in this process: 200 runs x 10 no-op steps (the parallel workload) at concurrency 256, in a home
 * of its own; steps per second of the engine phase. The yardstick other rates are compared with.
 */
export async function wRate(label) {
  const home = tempHome(label);
  const store = openStore(home.dbPath);
  try {
    await createRuns(store, chainPlan('bench-w', 10), 200, home.dir);
    const start = now();
    const report = await noopEngine(store, home.dir).run({ kind: 'drain' });
    const seconds = (now() - start) / 1000;
    assert(report.attemptsCommitted === 2000, `W committed ${report.attemptsCommitted} of 2000`);
    return 2000 / seconds;
  } finally {
    await store.close();
    home.dispose();
  }
}
