/**
 * `baton.schedule` and `baton.schedules` (the TypeScript API): idempotent by name, a changed
 * argument updates the stored schedule, bad options are refused before anything is stored, and a
 * worker of the process ticks the schedule and runs each slot's run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';
import { waitFor } from './helpers/cli.js';
import { scheduleAddedEarlier } from './helpers/schedules.js';

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});
const open = () => {
  const home = mkdtempSync(join(tmpdir(), 'baton-api-sched-'));
  homes.push(home);
  return Baton.open({ home, pollMs: 20 });
};

describe('baton.schedule', () => {
  it('is idempotent by name, updates on a changed argument, refuses bad options storing nothing', async () => {
    const report = defineWorkflow<{ topic: string }>({ name: 'report', inputs: { topic: null } }).step(
      'fetch',
      (ctx) => `news about ${ctx.inputs.topic}`,
    );
    const baton = open();
    try {
      const options = { cron: '0 8 * * *', tz: 'Asia/Shanghai', inputs: { topic: 'rivals' } };
      const first = await baton.schedule('daily-report', report, options);
      expect(first.timing).toBe('cron "0 8 * * *" (Asia/Shanghai)');
      expect(first.nextFireTimes).toHaveLength(3);
      for (const at of first.nextFireTimes) expect(new Date(at).getUTCHours()).toBe(0);
      const again = await baton.schedule('daily-report', report, options);
      expect(again.updatedAt).toBe(first.updatedAt);
      const changed = await baton.schedule('daily-report', report, { ...options, overlap: 'queue' });
      expect(changed.rules.overlap).toBe('queue');
      for (const bad of [
        { cron: '0 8 * * *', tz: 'Mars/Base' },
        { every: '10ms' },
        { every: '30s' },
        { cron: '0,30 * * * * *' },
        { cron: 'every morning' },
      ]) {
        const error = await baton.schedule('other', report, bad).catch((e: unknown) => e);
        expect(isBatonError(error, 'INVALID_ARGUMENT')).toBe(true);
      }
      expect((await baton.schedules.list()).map((s) => s.name)).toEqual(['daily-report']);
      expect((await baton.schedules.pause('daily-report')).paused).toBe(true);
      expect((await baton.schedules.resume('daily-report')).paused).toBe(false);
      expect(await baton.schedules.remove('daily-report')).toBe(true);
      expect(await baton.schedules.list()).toEqual([]);
    } finally {
      await baton.close();
    }
  });

  it("a worker of the process ticks the schedule and runs each slot's run", async () => {
    const seen: string[] = [];
    const ping = defineWorkflow({ name: 'ping' }).step('ping', (ctx) => {
      seen.push(ctx.runId);
      return 'pong';
    });
    const baton = open();
    const worker = baton.worker();
    try {
      await baton.schedule('ping', ping, { every: '1m', catchUp: 'none' });
      // As if added a minute ago: its first slot is due, and the worker's next look finds it.
      scheduleAddedEarlier(homes.at(-1)!, 'ping', 60_000);
      const runId = await waitFor(() => seen[0], 30_000, 'a slot run');
      expect(runId).toMatch(/^ping-\d{8}T\d{6}Z$/);
      await baton.schedules.pause('ping');
      const triggered = await baton.schedules.trigger('ping');
      await waitFor(() => seen.includes(triggered.id), 30_000, 'the triggered run');
      const [view] = await baton.schedules.list();
      expect(view?.lastRun).toMatchObject({ id: triggered.id });
    } finally {
      await worker.stop(0);
      await baton.close();
    }
  });
});
