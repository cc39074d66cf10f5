/**
 * Sub-plans from code: a plan file loaded with `loadPlanFile` whose `plan:` step runs another plan
 * file, driven by `baton.result`; `baton.tree` shows the parent and the child it waits on, and the
 * parent's result is the child's output.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import { loadPlanFile } from '../src/workflow/load-plan-file.js';
import { waitFor, writePlan } from './helpers/cli.js';
import { startTestConsole, withSession } from './helpers/console.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('sub-plans through the API', () => {
  it('baton.tree shows the child a step waits on; the parent ends with its output', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-sub-plan-api-'));
    dirs.push(dir);
    writePlan(
      dir,
      {
        name: 'child',
        inputs: { n: {} },
        output: '{{steps.double.result}}',
        steps: [{ id: 'double', fn: 'double', args: {} }],
      },
      { name: 'child.yaml' },
    );
    const file = writePlan(
      dir,
      {
        name: 'parent',
        steps: [
          { id: 'seed', fn: 'seed' },
          {
            id: 'sub',
            dependsOn: ['seed'],
            plan: { path: './child.yaml', inputs: { n: '{{steps.seed.result}}' } },
          },
        ],
      },
      { name: 'parent.yaml' },
    );
    const { plan } = await loadPlanFile(file);
    const baton = Baton.open({ home: join(dir, '.baton'), pollMs: 20 });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      baton.functions.register('seed', () => 21);
      baton.functions.register('double', async (ctx) => {
        await gate;
        return Number(ctx.inputs.n) * 2;
      });
      await baton.startPlan(plan, {}, { runId: 'p1' });
      const done = baton.result('p1');
      const tree = await waitFor(
        async () => {
          const found = await baton.tree('p1');
          return found.children.length === 1 ? found : undefined;
        },
        30_000,
        'the child to start',
      );
      expect(tree).toMatchObject({ runId: 'p1', planName: 'parent', status: 'running' });
      const child = tree.children[0]!;
      expect(child).toMatchObject({
        stepId: 'sub',
        planName: 'child',
        parentRunId: 'p1',
        parentStepId: 'sub',
        children: [],
      });
      expect(await baton.tree(child.runId)).toMatchObject({ parentRunId: 'p1', parentStepId: 'sub' });
      // The console links them both ways.
      const console = await startTestConsole(baton.store, baton.home);
      try {
        const page = async (path: string) =>
          (await fetch(`${console.origin}${path}`, { headers: withSession() })).text();
        expect(await page('/runs/p1')).toContain(
          `waits on child run <a href="/runs/${child.runId}">${child.runId}</a>`,
        );
        expect(await page(`/runs/${child.runId}`)).toContain(
          'child of run <a href="/runs/p1">p1</a> (its step sub)',
        );
      } finally {
        await console.close();
      }
      release();
      expect(await done).toEqual({ seed: 21, sub: '42' });
      expect((await baton.tree('p1')).children).toEqual([]);
    } finally {
      release();
      await baton.close();
    }
  }, 60_000);

  it('a workflow step runs another workflow per item, typed; plan: { name } finds a registered workflow', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-sub-workflow-'));
    dirs.push(dir);
    const square = defineWorkflow<{ n: string }>({ name: 'square', inputs: { n: null } }).step(
      'times',
      (ctx) => Number(ctx.inputs.n) ** 2,
    );
    const parent = defineWorkflow({ name: 'squares' })
      .step('list', () => [2, 3, 4])
      .step('each', {
        dependsOn: ['list'],
        workflow: square,
        forEach: { items: 'steps.list.result', as: 'n', maxItems: 10, concurrency: 2 },
        inputs: { n: '{{n}}' },
      })
      .step('sum', { dependsOn: ['each'] }, (ctx) =>
        ctx.results.each.reduce((total, child) => total + child.times, 0),
      );
    const baton = Baton.open({ home: join(dir, '.baton'), pollMs: 20 });
    try {
      const results = await baton.run(parent, {}, { runId: 'sq' });
      expect(results.each).toEqual([{ times: 4 }, { times: 9 }, { times: 16 }]);
      expect(results.sum).toBe(29);
      const tree = await baton.tree('sq');
      expect(tree.status).toBe('succeeded');
      const children = await baton.store.listRuns({ planName: 'square' });
      expect(children).toHaveLength(3);

      // A plan object naming a registered workflow by name runs it as its child.
      const plan = validatePlanObject(
        { name: 'by-name', steps: [{ id: 'one', plan: { name: 'square', inputs: { n: '5' } } }] },
        'test',
      );
      await baton.startPlan(plan, {}, { runId: 'named' });
      expect(await baton.result('named')).toEqual({ one: { times: 25 } });

      // A name nothing knows, and missing child inputs, are refused before anything is stored.
      const unknown = validatePlanObject(
        { name: 'lost', steps: [{ id: 'one', plan: { name: 'nowhere' } }] },
        'test',
      );
      await expect(baton.startPlan(unknown, {}, { runId: 'lost' })).rejects.toThrow(
        /steps\.one\.plan\.name: no plan named "nowhere" is known here/,
      );
      const lacking = validatePlanObject(
        { name: 'lacking', steps: [{ id: 'one', plan: { name: 'square' } }] },
        'test',
      );
      await expect(baton.startPlan(lacking)).rejects.toThrow(
        /steps\.one\.plan\.inputs: plan square needs input "n"/,
      );
      expect(await baton.store.getRun('lost')).toBeNull();
      expect(() =>
        defineWorkflow({ name: 'bad' })
          .step('x', { workflow: square, inputs: { m: '1' } })
          .toPlan(),
      ).toThrow(/workflow bad: steps\.x\.inputs\.m: plan square declares no input "m"/);
    } finally {
      await baton.close();
    }
  }, 60_000);
});
