/**
 * The console's run page draws a fan-out as its one group node with the progress of its items
 * (`1/3 done, 1 running`), not one node per item; the steps table still lists every item.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runPage } from '../src/console/pages/run-page.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Completion } from '../src/store/store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const plan = validatePlanObject(
  {
    name: 'summarise-pages',
    steps: [
      { id: 'research', fn: 'research' },
      {
        id: 'summarise',
        fn: 'summarise',
        dependsOn: ['research'],
        forEach: { items: 'steps.research.result.pages', maxItems: 10 },
      },
    ],
  },
  'pages.json',
);

describe('the run page of a fan-out', () => {
  it('draws the group as one node with its items done and running; the table lists every item', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-console-fan-out-'));
    dirs.push(dir);
    const store = SqliteStore.open(join(dir, 'baton.db'));
    try {
      await store.createRun({ id: 'run1', plan, planHash: 'h', inputs: {}, workspace: dir, now: 1000 });
      const cycle = (now: number, completions: Completion[], claimLimit: number) =>
        store.cycle({ owner: 'w1', now, leaseMs: 100_000, completions, claimLimit, random: () => 0 });
      const ok = (stepId: string, attempt: number, value: unknown, now: number): Completion => ({
        runId: 'run1',
        stepId,
        attempt,
        owner: 'w1',
        outcome: { ok: true, summary: 'done', outputs: [], value },
        startedAt: now - 1,
        endedAt: now,
        logPath: null,
      });
      const [research] = (await cycle(2000, [], 1)).claimed;
      await cycle(2010, [ok('research', research!.attempt, { pages: ['a', 'b', 'c'] }, 2010)], 0);
      await cycle(2020, [], 1); // the expansion
      const items = (await cycle(2030, [], 2)).claimed;
      expect(items.map((c) => c.stepId)).toEqual(['summarise[0]', 'summarise[1]']);
      await cycle(2040, [ok('summarise[0]', items[0]!.attempt, 'A', 2040)], 0);

      const run = await store.getRun('run1');
      const page = runPage(run!, 'csrf', 3000).toString();
      const svg = page.slice(page.indexOf('<svg'), page.indexOf('</svg>'));
      expect(svg).toContain('data-step="summarise"');
      expect(svg).toContain('pending · 1/3 done, 1 running');
      expect(svg).not.toContain('summarise[0]');
      expect(page).toContain('<tr data-step="summarise[2]">');
    } finally {
      await store.close();
    }
  });
});
