/**
 * Sub-plans from code: a plan file loaded with `loadPlanFile` whose `plan:` step runs another plan
 * file, driven by `baton.result`; `baton.tree` shows the parent and the child it waits on, and the
 * parent's result is the child's output.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Baton } from '../src/workflow/baton.js';
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
});
