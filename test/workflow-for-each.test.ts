/**
 * A fan-out on a workflow step: "summarise each page the research step found". The research step
 * returns the pages; summarise runs once per page (`ctx.item`), at most 2 at a time; report reads
 * the list of summaries in page order; `baton status` shows the group's progress. Runs on a real
 * SQLite home; the CLI is the built dist/cli/main.js.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import { repoRoot } from './helpers/cli.js';

const run = promisify(execFile);
const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

const PAGES = [
  'https://a.example/one',
  'https://b.example/two',
  'https://c.example/three',
  'https://d.example/4',
];

describe('forEach on a workflow step', () => {
  it('summarises each page the research step found, in page order, at most 2 at a time; status shows the group', async () => {
    const home = mkdtempSync(join(tmpdir(), 'baton-foreach-'));
    homes.push(home);
    let running = 0;
    let most = 0;
    const seen: { item: unknown; index: unknown; stepId: string }[] = [];
    const research = defineWorkflow({ name: 'research-digest', limits: { concurrency: 4, maxSteps: 50 } })
      .step('research', () => ({ pages: PAGES }))
      .step(
        'summarise',
        {
          dependsOn: ['research'],
          forEach: { items: 'steps.research.result.pages', as: 'page', maxItems: 10, concurrency: 2 },
        },
        async (ctx) => {
          seen.push({ item: ctx.item, index: ctx.itemIndex, stepId: ctx.stepId });
          running += 1;
          most = Math.max(most, running);
          // Gives the worker the chance to start another item while this one runs.
          await new Promise((resolve) => setTimeout(resolve, 20));
          running -= 1;
          return `summary of ${String(ctx.item)}`;
        },
      )
      .step('report', { dependsOn: ['summarise'] }, (ctx) => {
        // Typed as the list of the items' values.
        const summaries: string[] = ctx.results.summarise;
        return summaries;
      });
    const baton = Baton.open({ home, pollMs: 10 });
    let result: Record<string, unknown>;
    try {
      result = await baton.run(research, {}, { runId: 'digest' });
    } finally {
      await baton.close();
    }
    const summaries = PAGES.map((page) => `summary of ${page}`);
    expect(result.summarise).toEqual(summaries);
    expect(result.report).toEqual(summaries);
    expect(seen.map((s) => s.stepId).sort()).toEqual(PAGES.map((_, i) => `summarise[${i}]`).sort());
    expect(seen.map((s) => [s.index, s.item]).sort()).toEqual(PAGES.map((page, i) => [i, page]).sort());
    expect(most).toBeLessThanOrEqual(2);
    const status = (
      await run(process.execPath, [join(repoRoot, 'dist/cli/main.js'), '--home', home, 'status', 'digest'])
    ).stdout;
    expect(status).toContain('summarise 4/4 done, 0 running');
    expect(status).toMatch(/summarise\[3\]\s+succeeded/);
    const timeline = (
      await run(process.execPath, [join(repoRoot, 'dist/cli/main.js'), '--home', home, 'timeline', 'digest'])
    ).stdout;
    expect(timeline).toMatch(/summarise.*fan-out: expanded into 4 items/);
  });
});
