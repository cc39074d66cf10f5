import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { Baton, RunNotSucceededError } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import { repoRoot } from './helpers/cli.js';
import { walCommits } from './helpers/sqlite-wal.js';

const run = promisify(execFile);
const homes: string[] = [];
const open = () => Baton.open({ home: newHome(), pollMs: 20 });
const newHome = () => {
  const home = mkdtempSync(join(tmpdir(), 'baton-api-'));
  homes.push(home);
  return home;
};
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

describe('typed workflow API', () => {
  it('passes each step the values of its dependencies and returns every result', async () => {
    const calls: string[] = [];
    const report = defineWorkflow<{ topic: string }>({ name: 'report', inputs: { topic: null } })
      .step('research', (ctx) => {
        calls.push('research');
        return { notes: [`${ctx.inputs.topic} live in rivers`] };
      })
      .step('count', () => 2)
      .step('write', { dependsOn: ['research', 'count'] }, (ctx) => {
        calls.push('write');
        return `${ctx.results.research.notes[0]} (x${ctx.results.count})`;
      });
    const baton = open();
    try {
      const results = await baton.run(report, { topic: 'otters' }, { runId: 'r1' });
      expect(results).toEqual({
        research: { notes: ['otters live in rivers'] },
        count: 2,
        write: 'otters live in rivers (x2)',
      });
      expect(calls).toEqual(['research', 'write']);
    } finally {
      await baton.close();
    }
  });

  it('startMany stores its runs in one commit, and each runs to its own result', async () => {
    const double = defineWorkflow<{ n: string }>({ name: 'double', inputs: { n: null } }).step(
      'twice',
      (ctx) => Number(ctx.inputs.n) * 2,
    );
    const home = newHome();
    const baton = Baton.open({ home, pollMs: 20 });
    try {
      await baton.ready();
      const before = walCommits(join(home, 'baton.db'));
      const inputs = Array.from({ length: 30 }, (_, i) => ({ n: String(i) }));
      const started = await baton.startMany(double, inputs);
      expect(walCommits(join(home, 'baton.db')) - before).toBe(1);
      expect(started.every((run) => run.created)).toBe(true);
      const results = await Promise.all(started.map((run) => baton.result(double, run.runId)));
      expect(results.map((result) => result.twice)).toEqual(inputs.map((_, i) => i * 2));
      // Idempotent by run id, as start is; the ids and the inputs must pair up.
      const again = await baton.startMany(double, [{ n: '1' }], { runIds: [started[1]!.runId] });
      expect(again).toEqual([{ runId: started[1]!.runId, created: false }]);
      await expect(baton.startMany(double, [{ n: '1' }], { runIds: [] })).rejects.toThrow(
        /0 run ids for 1 inputs/,
      );
      // An item that cannot be started (its input missing) stores none of the call's runs, not
      // even those before it in the list.
      await expect(
        baton.startMany(double, [{ n: '1' }, {} as { n: string }, { n: '3' }], {
          runIds: ['m1', 'm2', 'm3'],
        }),
      ).rejects.toThrow(/needs input "n"/);
      // A start made after it is stored in the same commit as anything still queued, or a later one.
      await baton.start(double, { n: '9' }, { runId: 'after' });
      for (const id of ['m1', 'm2', 'm3']) expect(await baton.store.getRun(id)).toBeNull();
    } finally {
      await baton.close();
    }
  });

  it('leaves a workflow unchanged by the steps added to it afterwards, also when branched twice', () => {
    const base = defineWorkflow({ name: 'branch' }).step('a', () => 1);
    const left = base.step('b', () => 2).step('c', () => 3);
    const right = base.step('d', () => 4);
    const ids = (workflow: { steps: readonly { id: string }[] }) => workflow.steps.map((step) => step.id);
    expect(ids(base)).toEqual(['a']);
    expect(ids(left)).toEqual(['a', 'b', 'c']);
    expect(ids(right)).toEqual(['a', 'd']);
    expect(right.toPlan().steps.map((step) => step.id)).toEqual(['a', 'd']);
    expect(ids(base.step('e', () => 5))).toEqual(['a', 'e']);
    expect(ids(left)).toEqual(['a', 'b', 'c']);
  });

  it('holds steps sharing a flowKey to the limit set with setFlowLimit, across runs', async () => {
    let running = 0;
    let most = 0;
    const call = async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 30));
      running--;
      return 'ok';
    };
    const wf = defineWorkflow({ name: 'fanout', limits: { concurrency: 8 } })
      .step('a', { flowKey: 'api/search' }, call)
      .step('b', { flowKey: 'api/search' }, call)
      .step('c', { flowKey: 'api/search' }, call);
    const baton = open();
    try {
      await baton.setFlowLimit('api/search', { concurrency: 2 });
      const results = await Promise.all([baton.run(wf, {}), baton.run(wf, {})]);
      expect(results).toEqual([
        { a: 'ok', b: 'ok', c: 'ok' },
        { a: 'ok', b: 'ok', c: 'ok' },
      ]);
      expect(most).toBe(2);
      await expect(baton.setFlowLimit('api/search', { rate: 'often' })).rejects.toThrow(/is not a rate/);
      await baton.setFlowLimit('api/search', null);
    } finally {
      await baton.close();
    }
  });

  it('start is idempotent by run id: the second start returns the same run and runs nothing again', async () => {
    let runs = 0;
    const wf = defineWorkflow({ name: 'once' }).step('a', () => ++runs);
    const baton = open();
    try {
      expect(await baton.start(wf, {}, { runId: 'same' })).toEqual({ runId: 'same', created: true });
      expect(await baton.start(wf, {}, { runId: 'same' })).toEqual({ runId: 'same', created: false });
      expect(await baton.result(wf, 'same')).toEqual({ a: 1 });
      expect(await baton.start(wf, {}, { runId: 'same' })).toEqual({ runId: 'same', created: false });
      expect(await baton.result('same')).toEqual({ a: 1 });
      expect(runs).toBe(1);
      expect(await baton.store.listRuns()).toHaveLength(1);
      const other = defineWorkflow({ name: 'other' }).step('a', () => 0);
      await expect(baton.start(other, {}, { runId: 'same' })).rejects.toSatisfy((e) =>
        isBatonError(e, 'INVALID_ARGUMENT'),
      );
    } finally {
      await baton.close();
    }
  });

  it('validates a workflow once for all its starts; a shadow start leaves the plain ones plain', async () => {
    const one = defineWorkflow({ name: 'once' }).step('a', () => 1);
    expect(one.toPlan()).toBe(one.toPlan());
    const two = one.step('b', { dependsOn: ['a'] }, () => 2);
    expect(two.toPlan().steps.map((s) => s.id)).toEqual(['a', 'b']);
    expect(one.toPlan().steps.map((s) => s.id)).toEqual(['a']);
    const baton = open();
    try {
      await baton.start(two, {}, { runId: 'plain1' });
      await baton.start(two, {}, { runId: 'shadow', shadow: true });
      await baton.start(two, {}, { runId: 'plain2' });
      const plans = await Promise.all(
        ['plain1', 'shadow', 'plain2'].map(async (id) => (await baton.store.getRun(id))?.plan.shadow),
      );
      expect(plans).toEqual([undefined, true, undefined]);
    } finally {
      await baton.close();
    }
  });

  it('a step that keeps failing blocks the run; result() says why', async () => {
    const wf = defineWorkflow({ name: 'broken' }).step(
      'a',
      { retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 1 } },
      () => {
        throw new Error('the API said no');
      },
    );
    const baton = open();
    try {
      const { runId } = await baton.start(wf, {});
      const error = await baton.result(wf, runId).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RunNotSucceededError);
      expect(error).toMatchObject({ status: 'blocked' });
      expect((error as Error).message).toContain('the API said no');
    } finally {
      await baton.close();
    }
  });

  it('a worker in the process runs what is started; heartbeats and logs land in the run', async () => {
    const wf = defineWorkflow({ name: 'logged' }).step('a', (ctx) => {
      ctx.heartbeat('halfway');
      ctx.log('fetched 3 pages');
      return 'done';
    });
    const baton = open();
    baton.register(wf);
    const worker = baton.worker();
    try {
      const { runId } = await baton.start(wf, {});
      expect(await baton.result(wf, runId)).toEqual({ a: 'done' });
      const events = await baton.store.getEvents(runId);
      expect(events.find((e) => e.type === 'step.heartbeat')).toMatchObject({ stepId: 'a', note: 'halfway' });
      const [attempt] = await baton.store.getAttempts(runId, 'a');
      expect(readFileSync(join(baton.home, attempt!.logPath!), 'utf8')).toMatch(/fetched 3 pages\n$/);
    } finally {
      await worker.stop(0);
      await baton.close();
    }
  });

  it('runs started from code show in baton status and timeline', async () => {
    const wf = defineWorkflow({ name: 'visible' }).step('a', () => 1);
    const baton = open();
    await baton.run(wf, {}, { runId: 'seen' });
    await baton.close();
    const { stdout } = await run(process.execPath, [
      join(repoRoot, 'dist/cli/main.js'),
      '--home',
      baton.home,
      'status',
      'seen',
      '--json',
    ]);
    expect(JSON.parse(stdout)).toMatchObject({ id: 'seen', planName: 'visible', status: 'succeeded' });
  });

  it('is type-checked: results are typed from dependencies, mistakes do not compile', async () => {
    const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', join(repoRoot, 'test/types/tsconfig.json')]).catch(
      (error: { stdout: string }) => error,
    );
    expect('stdout' in result ? result.stdout : '').toBe('');
  });
});
