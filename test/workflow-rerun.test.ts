/**
 * `baton.rerun` and `baton.fork` from code: the daily report's `send` mails through `ctx.effect`,
 * which a rerun does not repeat unless asked to (`redoEffects`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function daily() {
  const ran: string[] = [];
  const mails: string[] = [];
  let analyses = 0;
  const workflow = defineWorkflow({ name: 'daily-report' })
    .step('fetch', () => {
      ran.push('fetch');
      return ['acme', 'globex'];
    })
    .step('analyze', { dependsOn: ['fetch'] }, () => {
      ran.push('analyze');
      analyses += 1;
      return `analysis ${analyses}`;
    })
    .step('report', { dependsOn: ['analyze'] }, (ctx) => {
      ran.push('report');
      return `report from ${ctx.results.analyze}`;
    })
    .step('send', { dependsOn: ['report'] }, async (ctx) => {
      ran.push('send');
      return ctx.effect('mail', () => {
        mails.push(String(ctx.results.report));
        return { sent: mails.length };
      });
    });
  return { workflow, ran, mails };
}

describe('baton.rerun and baton.fork', () => {
  it('a rerun of analyze brings a fresh report and sends no second mail, unless effects are redone', async () => {
    const home = mkdtempSync(join(tmpdir(), 'baton-rerun-api-'));
    homes.push(home);
    const { workflow, ran, mails } = daily();
    const baton = Baton.open({ home, pollMs: 20 });
    try {
      await baton.run(workflow, {}, { runId: 'daily' });
      expect(mails).toEqual(['report from analysis 1']);
      ran.length = 0;
      const summary = await baton.rerun('daily', { from: 'analyze', by: 'ana' });
      expect(summary.status).toBe('running');
      const results = await baton.result(workflow, 'daily');
      expect(ran).toEqual(['analyze', 'report', 'send']);
      expect(results.report).toBe('report from analysis 2');
      // The mail of the first run was recorded: the rerun's send returns it, sending nothing.
      expect(results.send).toEqual({ sent: 1 });
      expect(mails).toEqual(['report from analysis 1']);
      await baton.rerun('daily', { from: 'send', redoEffects: true });
      await baton.result(workflow, 'daily');
      expect(mails).toEqual(['report from analysis 1', 'report from analysis 2']);
      await expect(baton.rerun('daily', { from: 'analyse' })).rejects.toSatisfy(
        (e) => isBatonError(e, 'STEP_NOT_FOUND') && e.message.includes('"analyse"'),
      );
    } finally {
      await baton.close();
    }
  });

  it('keep: send keeps its result and does not run; the answer lists what runs and what is kept', async () => {
    const home = mkdtempSync(join(tmpdir(), 'baton-rerun-keep-api-'));
    homes.push(home);
    const { workflow, ran, mails } = daily();
    const baton = Baton.open({ home, pollMs: 20 });
    try {
      await baton.run(workflow, {}, { runId: 'daily' });
      ran.length = 0;
      const summary = await baton.rerun('daily', { from: 'analyze', keep: ['send'] });
      expect(summary.rerun).toMatchObject({ steps: ['analyze', 'report'], kept: ['send'] });
      const results = await baton.result(workflow, 'daily');
      expect(ran).toEqual(['analyze', 'report']);
      expect(results.report).toBe('report from analysis 2');
      expect(results.send).toEqual({ sent: 1 });
      expect(mails).toEqual(['report from analysis 1']);
      await expect(baton.rerun('daily', { from: 'analyze', keep: ['fetch'] })).rejects.toSatisfy(
        (e) =>
          isBatonError(e, 'INVALID_ARGUMENT') && e.message.startsWith('--keep fetch: it does not run again'),
      );
    } finally {
      await baton.close();
    }
  });

  it('a fork keeps the steps before the fork point and runs the rest as a new run', async () => {
    const home = mkdtempSync(join(tmpdir(), 'baton-fork-api-'));
    homes.push(home);
    const { workflow, ran } = daily();
    const baton = Baton.open({ home, pollMs: 20 });
    try {
      await baton.run(workflow, {}, { runId: 'daily' });
      ran.length = 0;
      const forked = await baton.fork('daily', { from: 'report', runId: 'daily-2' });
      expect(forked).toMatchObject({ runId: 'daily-2', kept: ['fetch', 'analyze'] });
      expect(forked.workspace).toBe(join(home, 'workspaces', 'daily-2'));
      const results = await baton.result(workflow, 'daily-2');
      expect(ran).toEqual(['report', 'send']);
      expect(results.report).toBe('report from analysis 1');
      expect((await baton.store.getRun('daily-2'))?.plan.forkedFrom).toEqual({
        runId: 'daily',
        stepId: 'report',
      });
    } finally {
      await baton.close();
    }
  });
});
