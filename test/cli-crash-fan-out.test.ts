/**
 * A fan-out under real crashes: a worker (bench/crash-worker.mjs, the CLI's Engine over the built
 * dist/, with a counting `noop` and a `list`) is SIGKILLed again and again while a 200-item fan-out
 * with concurrency 8 runs, and restarted. Each item exists exactly once (one expansion, 200 rows),
 * succeeds exactly once, and runs exactly once unless a kill caught it in flight (then it is
 * retried as an interrupted attempt, at most once more per such kill); a committed item never runs
 * again. No timing: every wait polls a condition.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { startRun } from '../src/engine/start-run.js';
import { databasePath } from '../src/runtime/home.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { removeTempDirs, repoRoot, tempDir, waitFor } from './helpers/cli.js';

afterAll(() => removeTempDirs());

const ITEMS = 200;
const WORKER = join(repoRoot, 'bench', 'crash-worker.mjs');

const plan = validatePlanObject(
  {
    name: 'crash-fan-out',
    limits: { concurrency: 64, maxSteps: 2000, noProgressAfter: 20 },
    defaults: { retry: { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 50, maxInterruptions: 20 } },
    steps: [
      { id: 'list', fn: 'list', args: { n: ITEMS } },
      {
        id: 'each',
        fn: 'noop',
        args: { sleepMs: 25 },
        dependsOn: ['list'],
        forEach: { items: 'steps.list.result', as: 'n', maxItems: ITEMS, concurrency: 8 },
      },
    ],
  },
  'crash-fan-out.json',
);

/** Executions per step id, from the counting file ("run step attempt" lines). */
function executions(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const step = line.split(' ')[1];
    if (step) counts.set(step, (counts.get(step) ?? 0) + 1);
  }
  return counts;
}

function total(counts: Map<string, number>): number {
  let sum = 0;
  for (const count of counts.values()) sum += count;
  return sum;
}

describe('a fan-out under repeated SIGKILL of its worker', () => {
  it('runs each of 200 items (concurrency 8) exactly once but for those a kill caught in flight', async () => {
    const dir = tempDir('baton-crash-fan-out-');
    const countFile = join(dir, 'executions.log');
    const store = SqliteStore.open(databasePath(dir));
    await startRun(store, { plan, runId: 'fan', workspace: dir });
    await store.close();

    const db = new Database(databasePath(dir), { readonly: true, fileMustExist: true });
    const stepsOf = db.prepare("SELECT step_id, status FROM steps WHERE run_id = 'fan'");
    const runStatus = db.prepare("SELECT status FROM runs WHERE id = 'fan'").pluck();
    const kills: { inFlight: Set<string>; succeeded: Set<string>; counts: Map<string, number> }[] = [];
    const workers: ChildProcess[] = [];
    const start = () => {
      const child = spawn(
        process.execPath,
        [WORKER, '--home', dir, '--count', countFile, '--lease', '1000'],
        {
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      workers.push(child);
      return child;
    };
    const kill = async (child: ChildProcess) => {
      const exited = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      const rows = stepsOf.all() as { step_id: string; status: string }[];
      kills.push({
        inFlight: new Set(rows.filter((r) => r.status === 'running').map((r) => r.step_id)),
        succeeded: new Set(rows.filter((r) => r.status === 'succeeded').map((r) => r.step_id)),
        counts: executions(countFile),
      });
    };
    try {
      // Around the expansion (the list step has just run), then three times among the items.
      for (const executed of [1, 40, 100, 160]) {
        const worker = start();
        await waitFor(() => total(executions(countFile)) >= executed, 60_000, `${executed} executions`, 2);
        await kill(worker);
      }
      const last = start();
      await waitFor(() => runStatus.get() === 'succeeded', 120_000, 'the run to succeed', 20);
      const exited = new Promise((resolve) => last.once('exit', (code) => resolve(code)));
      last.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      for (const worker of workers)
        if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
    }

    const rows = stepsOf.all() as { step_id: string; status: string }[];
    const items = rows.filter((r) => r.step_id.startsWith('each['));
    // Each item exists exactly once, and all succeeded.
    expect(items.map((r) => r.step_id).sort()).toEqual(
      Array.from({ length: ITEMS }, (_, i) => `each[${i}]`).sort(),
    );
    expect(items.every((r) => r.status === 'succeeded')).toBe(true);
    const events = db
      .prepare(
        "SELECT type, step_id FROM events WHERE run_id = 'fan' AND type IN ('step.expanded', 'step.succeeded')",
      )
      .all() as { type: string; step_id: string }[];
    db.close();
    expect(events.filter((e) => e.type === 'step.expanded')).toHaveLength(1);
    const succeeded = new Map<string, number>();
    for (const e of events.filter((e) => e.type === 'step.succeeded'))
      succeeded.set(e.step_id, (succeeded.get(e.step_id) ?? 0) + 1);
    for (const item of items)
      expect({ item: item.step_id, succeeded: succeeded.get(item.step_id) }).toEqual({
        item: item.step_id,
        succeeded: 1,
      });

    const final = executions(countFile);
    for (let i = 0; i < ITEMS; i++) {
      const id = `each[${i}]`;
      const caught = kills.filter((k) => k.inFlight.has(id)).length;
      const ran = final.get(id) ?? 0;
      expect({ id, ran: ran >= 1 && ran <= 1 + caught }).toEqual({ id, ran: true });
      if (caught === 0) expect({ id, ran }).toEqual({ id, ran: 1 });
      // Committed before a kill: never run again.
      for (const k of kills)
        if (k.succeeded.has(id)) expect({ id, ran }).toEqual({ id, ran: k.counts.get(id) });
    }
    // The kills did land among running items.
    expect(kills.slice(1).some((k) => [...k.inFlight].some((id) => id.startsWith('each[')))).toBe(true);

    const check = SqliteStore.open(databasePath(dir));
    try {
      const result = (await check.getStepResults('fan', ['each'])).each;
      expect(result?.value).toEqual(Array.from({ length: ITEMS }, () => 'x'.repeat(100)));
    } finally {
      await check.close();
    }
  }, 240_000);
});
