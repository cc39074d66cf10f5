import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { Engine } from '../src/engine/engine.js';
import { startRun } from '../src/engine/start-run.js';
import { AgentCliExecutor } from '../src/executors/agent-cli-executor.js';
import { FunctionExecutor, FunctionRegistry, StepFailure } from '../src/executors/function-executor.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

describe('engine with function steps', () => {
  let dir: string;
  let store: SqliteStore;
  let registry: FunctionRegistry;
  const engine = (concurrency = 8, owner = 'test') =>
    new Engine({
      store,
      home: dir,
      owner,
      concurrency,
      leaseMs: 2000,
      executors: { agent: new AgentCliExecutor(), fn: new FunctionExecutor(registry) },
    });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'baton-engine-'));
    store = SqliteStore.open(join(dir, 'baton.db'));
    registry = new FunctionRegistry();
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs independent steps of a DAG in parallel up to the run concurrency, dependents after', async () => {
    let running = 0;
    let peak = 0;
    const order: string[] = [];
    registry.register('work', async ({ stepId }) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 40));
      running--;
      order.push(stepId);
      return `${stepId} done`;
    });
    const plan = validatePlanObject(
      {
        name: 'fan',
        limits: { concurrency: 3 },
        steps: [
          { id: 'root', fn: 'work' },
          ...['a', 'b', 'c', 'd', 'e'].map((id) => ({ id, fn: 'work', dependsOn: ['root'] })),
          { id: 'join', fn: 'work', dependsOn: ['a', 'b', 'c', 'd', 'e'] },
        ],
      },
      'test',
    );
    const run = await startRun(store, { plan, workspace: dir });
    await engine().run({ kind: 'until-settled', runId: run.id });
    expect((await store.getRun(run.id))?.status).toBe('succeeded');
    expect(peak).toBe(3);
    expect(order[0]).toBe('root');
    expect(order[order.length - 1]).toBe('join');
  });

  it('passes dependency results to functions and classifies their failures', async () => {
    registry.register('produce', () => ({ answer: 42 }));
    registry.register('consume', ({ results }) => `got ${JSON.stringify(results.produce?.value)}`);
    registry.register('fatal', () => {
      throw new StepFailure('credentials rejected', 'fatal');
    });
    const plan = validatePlanObject(
      {
        name: 'pass',
        steps: [
          { id: 'produce', fn: 'produce' },
          { id: 'consume', fn: 'consume', dependsOn: ['produce'] },
          { id: 'broken', fn: 'fatal' },
        ],
      },
      'test',
    );
    const run = await startRun(store, { plan, workspace: dir });
    await engine().run({ kind: 'until-settled', runId: run.id });
    const detail = await store.getRun(run.id);
    expect(detail?.status).toBe('blocked');
    expect((await store.getStepResults(run.id, ['consume'])).consume?.summary).toBe('got {"answer":42}');
    const broken = detail?.steps.find((s) => s.stepId === 'broken');
    expect(broken).toMatchObject({ status: 'blocked', attempt: 1, lastFailureClass: 'fatal' });
  });

  it("gives each attempt its own copy of the step's args: a function changing them changes no other run", async () => {
    const seen: unknown[] = [];
    registry.register('collect', (ctx) => {
      seen.push(structuredClone(ctx.args));
      (ctx.args as { items: string[] }).items.push(ctx.runId);
      return 'ok';
    });
    const plan = validatePlanObject(
      { name: 'args', steps: [{ id: 'a', fn: 'collect', args: { items: [] } }] },
      'test',
    );
    for (const runId of ['r1', 'r2', 'r3']) {
      await startRun(store, { plan, workspace: dir, runId });
      await engine().run({ kind: 'until-settled', runId });
    }
    expect(seen).toEqual([{ items: [] }, { items: [] }, { items: [] }]);
    expect((await store.getRun('r3'))?.plan.steps[0]?.args).toEqual({ items: [] });
  });

  it('does not abort the signal of a step that has returned (a stop while its large result is stored)', async () => {
    let returned = false;
    let abortedAfterReturn = false;
    let worker: Engine | undefined;
    registry.register('big', (ctx) => {
      ctx.signal.addEventListener('abort', () => {
        if (returned) abortedAfterReturn = true;
      });
      returned = true;
      // The worker stops at once while the 100 KB result goes to the artifact store.
      setImmediate(() => worker?.stop(0));
      return 'x'.repeat(100_000);
    });
    const plan = validatePlanObject({ name: 'big', steps: [{ id: 'a', fn: 'big' }] }, 'test');
    const run = await startRun(store, { plan, workspace: dir });
    worker = engine();
    await worker.run({ kind: 'forever' });
    expect(returned).toBe(true);
    expect(abortedAfterReturn).toBe(false);
    expect((await store.getRun(run.id))?.status).toBe('succeeded');
  });

  it('drain mode leaves future timers for the next check instead of sleeping', async () => {
    registry.register('noop', () => 'ok');
    const plan = validatePlanObject(
      { name: 'later', steps: [{ id: 'a', fn: 'noop', delayBeforeMs: 3_600_000 }] },
      'test',
    );
    const run = await startRun(store, { plan, workspace: dir });
    // The step is due in an hour, past the test's timeout: a drain that slept for it never returns.
    const report = await engine().run({ kind: 'drain' });
    expect(report.attemptsStarted).toBe(0);
    expect((await store.getRun(run.id))?.steps[0]?.status).toBe('ready');
  });

  it('aborts an in-flight step when its run is cancelled, and discards its result', async () => {
    let aborted = false;
    let markStarted!: () => void;
    const stepStarted = new Promise<void>((resolve) => {
      markStarted = resolve;
    });
    registry.register('slow', ({ signal }) => {
      markStarted();
      return new Promise((resolve) => {
        signal.addEventListener('abort', () => {
          aborted = true;
          resolve('late');
        });
      });
    });
    const plan = validatePlanObject({ name: 'cancel-me', steps: [{ id: 'slow', fn: 'slow' }] }, 'test');
    const run = await startRun(store, { plan, workspace: dir });
    const e = new Engine({
      store,
      home: dir,
      owner: 'w',
      leaseMs: 150,
      executors: { agent: new AgentCliExecutor(), fn: new FunctionExecutor(registry) },
    });
    const driving = e.run({ kind: 'until-settled', runId: run.id });
    await stepStarted;
    await store.cancelRun(run.id, Date.now());
    const report = await driving;
    expect(aborted).toBe(true);
    expect(report.attemptsDiscarded).toBe(1);
    expect((await store.getRun(run.id))?.status).toBe('cancelled');
  });
});
