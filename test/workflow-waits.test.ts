import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import { waitFor } from './helpers/cli.js';

const homes: string[] = [];
const open = () => {
  const home = mkdtempSync(join(tmpdir(), 'baton-waits-api-'));
  homes.push(home);
  return Baton.open({ home, pollMs: 20 });
};
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** Resolves once the run's step is waiting (a worker started it). */
async function waiting(baton: Baton, runId: string, stepId: string): Promise<void> {
  await waitFor(async () => {
    const run = await baton.store.getRun(runId);
    return run?.steps.find((step) => step.stepId === stepId)?.status === 'waiting' ? true : undefined;
  }, 20_000);
}

describe('wait steps in the TypeScript API', () => {
  it('defineWorkflow takes a wait step; baton.approve ends it and the next step reads { approved, by, comment, at }', async () => {
    const report = defineWorkflow({ name: 'report' })
      .step('draft', () => 'the report')
      .step('approve-send', { dependsOn: ['draft'], wait: { for: 'approval', prompt: 'Send it?' } })
      .step('send', { dependsOn: ['approve-send'] }, (ctx) => {
        const approval = ctx.results['approve-send'];
        return `sent after ${approval.by} said ${approval.comment} (approved: ${approval.approved})`;
      });
    const baton = open();
    const worker = baton.worker();
    try {
      const { runId } = await baton.start(report, {}, { runId: 'r1' });
      await waiting(baton, runId, 'approve-send');
      await expect(baton.reject(runId, 'draft')).rejects.toSatisfy((e) =>
        isBatonError(e, 'INVALID_TRANSITION'),
      );
      await baton.approve(runId, 'approve-send', { comment: 'go', by: 'ann' });
      const results = await baton.result(report, runId);
      expect(results.send).toBe('sent after ann said go (approved: true)');
      expect(results['approve-send']).toMatchObject({ approved: true, by: 'ann', comment: 'go' });
    } finally {
      await worker.stop(0);
      await baton.close();
    }
  });

  it('baton.send delivers a payload checked against the schema; a bad one or one over 1 MiB is refused and nothing is stored', async () => {
    const deploy = defineWorkflow({ name: 'deploy' })
      .step('deployed', {
        wait: { for: 'event', event: 'deployed', schema: { type: 'object', required: ['version'] } },
      })
      .step('announce', { dependsOn: ['deployed'] }, (ctx) => ctx.results.deployed);
    const baton = open();
    const worker = baton.worker();
    try {
      const { runId } = await baton.start(deploy, {}, { runId: 'r1' });
      await waiting(baton, runId, 'deployed');
      await expect(baton.send('deployed', { v: 1 }, { runId })).rejects.toSatisfy((e) =>
        isBatonError(e, 'INVALID_ARGUMENT'),
      );
      expect((await baton.store.getRun(runId))?.steps[0]?.status).toBe('waiting');
      // Over the payload limit (1 MiB): refused before the schema or the store sees it.
      const huge = { version: '1.2', notes: 'x'.repeat(5 * 1024 * 1024) };
      await expect(baton.send('deployed', huge, { runId })).rejects.toSatisfy(
        (e) => isBatonError(e, 'INVALID_ARGUMENT') && /payload limit of 1 MiB/.test(e.message),
      );
      expect((await baton.store.getRun(runId))?.steps[0]?.status).toBe('waiting');
      expect((await baton.store.getEvents(runId)).map((e) => e.type)).not.toContain('event.received');
      expect(await baton.send('deployed', { version: '1.2' })).toEqual([
        { runId, stepId: 'deployed', outcome: 'received' },
      ]);
      expect((await baton.result(deploy, runId)).announce).toEqual({ version: '1.2' });
    } finally {
      await worker.stop(0);
      await baton.close();
    }
  });
});
