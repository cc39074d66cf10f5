import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { Engine } from '../src/engine/engine.js';
import { startRun } from '../src/engine/start-run.js';
import { FunctionExecutor, FunctionRegistry } from '../src/executors/function-executor.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

/** A wait's timeout is fired by a drain (what `baton check` runs), on an injected clock: no sleeps. */
describe('a waiting step’s timeout in the engine', () => {
  let dir: string;
  let store: SqliteStore;
  let clock: number;
  const calls: string[] = [];
  const drain = () =>
    new Engine({
      store,
      home: dir,
      owner: 'check',
      concurrency: 4,
      leaseMs: 60_000,
      now: () => clock,
      executors: { fn: new FunctionExecutor(registry) },
    }).run({ kind: 'drain' });
  const registry = new FunctionRegistry();
  registry.register('after', ({ stepId }) => {
    calls.push(stepId);
    return 'done';
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'baton-engine-waits-'));
    store = SqliteStore.open(join(dir, 'baton.db'));
    clock = Date.parse('2026-12-01T00:00:00Z');
    calls.length = 0;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fires from a check after its due time, not before, and the step after it runs once', async () => {
    const plan = validatePlanObject(
      {
        name: 'timeout',
        steps: [
          { id: 'ok', wait: { for: 'approval', timeout: '1h', onTimeout: 'skip' } },
          { id: 'next', fn: 'after', dependsOn: ['ok'] },
        ],
      },
      'timeout',
    );
    const { id: runId } = await startRun(store, { plan, workspace: dir, now: clock });
    await drain();
    const stepOf = async (id: string) => (await store.getRun(runId))!.steps.find((s) => s.stepId === id)!;
    const started = clock;
    expect(await stepOf('ok')).toMatchObject({ status: 'waiting', dueAt: started + 3_600_000 });
    clock = started + 3_599_999;
    await drain();
    expect((await stepOf('ok')).status).toBe('waiting');
    expect(calls).toEqual([]);
    clock = started + 3_600_000;
    await drain();
    expect((await stepOf('ok')).status).toBe('skipped');
    expect(calls).toEqual(['next']);
    expect((await store.getRun(runId))!.status).toBe('succeeded');
  });

  it('fires while a worker’s every slot is busy with a long attempt', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding = false;
    registry.register('hold', async () => {
      holding = true;
      await held;
      return 'held';
    });
    const waitPlan = validatePlanObject(
      { name: 'ask', steps: [{ id: 'ok', wait: { for: 'approval', timeout: '1h', onTimeout: 'skip' } }] },
      'ask',
    );
    const { id: waitRun } = await startRun(store, { plan: waitPlan, workspace: dir, now: clock });
    await drain();
    const stepOf = async (id: string) => (await store.getRun(waitRun))!.steps.find((s) => s.stepId === id)!;
    expect((await stepOf('ok')).status).toBe('waiting');
    const holdPlan = validatePlanObject({ name: 'hold', steps: [{ id: 'h', fn: 'hold' }] }, 'hold');
    await startRun(store, { plan: holdPlan, workspace: dir, now: clock });
    const worker = new Engine({
      store,
      home: dir,
      owner: 'worker',
      concurrency: 1,
      leaseMs: 60_000,
      pollMs: 10,
      now: () => clock,
      executors: { fn: new FunctionExecutor(registry) },
    });
    const running = worker.run({ kind: 'forever' });
    try {
      await until(() => holding);
      clock += 3_600_000;
      await until(async () => (await stepOf('ok')).status === 'skipped');
      expect(holding).toBe(true);
    } finally {
      release();
      worker.stop();
      await running;
    }
  });
});

/** Polls `condition` until it holds (a generous deadline: CI is a loaded machine). */
async function until(condition: () => boolean | Promise<boolean>, deadlineMs = 20_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error('condition not met before the deadline');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
