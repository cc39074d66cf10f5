/**
 * A step skipped by its `when` is drawn on the console's timeline as skipped by the plan, with its
 * condition, never as a person's action; a step a person skipped (`baton skip`) stays a human
 * mark. `baton timeline` words both the same way (one wording, runtime/format.ts `skipCause`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { painter } from '../src/cli/colour.js';
import { TimelineRows } from '../src/cli/timeline-view.js';
import type { RunningConsole } from '../src/console/console-server.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Completion } from '../src/store/store.js';
import { startTestConsole, withSession } from './helpers/console.js';

const dirs: string[] = [];
let running: RunningConsole | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const plan = validatePlanObject(
  {
    name: 'daily-competitor-report',
    steps: [
      { id: 'check', fn: 'check' },
      { id: 'fix-report', fn: 'fix', dependsOn: ['check'], when: 'steps.check.result.passed == false' },
      { id: 'send', fn: 'send', dependsOn: ['fix-report'] },
      { id: 'translate', fn: 'translate' },
    ],
  },
  'report.json',
);

describe('the timeline of a run with skipped steps', () => {
  it('shows a when skip as skipped by its condition and a person skip as a human action, in the console and the CLI alike', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-timeline-skips-'));
    dirs.push(dir);
    const store = SqliteStore.open(join(dir, 'baton.db'));
    try {
      await store.createRun({ id: 'r1', plan, planHash: 'h', inputs: {}, workspace: dir, now: 1000 });
      // A person skips translate before anything runs.
      await store.skipStep('r1', 'translate', 1100);
      const cycle = (now: number, completions: Completion[]) =>
        store.cycle({ owner: 'w1', now, leaseMs: 60_000, completions, claimLimit: 1, random: () => 0 });
      const [check] = (await cycle(2000, [])).claimed;
      expect(check?.stepId).toBe('check');
      // The check passed: fix-report's `when` is false, so it is skipped and send goes on.
      const done = (stepId: string, attempt: number, value: unknown, now: number): Completion => ({
        runId: 'r1',
        stepId,
        attempt,
        owner: 'w1',
        outcome: { ok: true, summary: `${stepId} done`, outputs: [], value },
        startedAt: now - 5,
        endedAt: now,
        logPath: null,
      });
      let claimed = (await cycle(2010, [done('check', check!.attempt, { passed: true }, 2010)])).claimed;
      for (let now = 2020; claimed.length === 0 && now < 2100; now += 10)
        claimed = (await cycle(now, [])).claimed;
      expect(claimed.map((claim) => claim.stepId)).toEqual(['send']);

      running = await startTestConsole(store, join(dir, 'home'));
      const response = await fetch(`${running.origin}/runs/r1/timeline.json`, { headers: withSession() });
      expect(response.status).toBe(200);
      const timeline = (await response.json()) as {
        steps: string[];
        marks: [number, number, string, string][];
      };
      const marksOf = (stepId: string) =>
        timeline.marks
          .filter(([row]) => timeline.steps[row] === stepId)
          .map(([, , kind, label]) => [kind, label]);
      const byCondition = 'skipped: when steps.check.result.passed == false was false';
      const byPerson = 'skipped by a person (baton skip)';
      expect(marksOf('fix-report')).toEqual([['skipped', byCondition]]);
      expect(marksOf('translate')).toEqual([['human', byPerson]]);

      // `baton timeline` says the same of each.
      const events = await store.getEvents('r1');
      const rows = new TimelineRows(events[0]!.at, painter(false));
      const said = (stepId: string) =>
        events
          .filter((event) => event.type === 'step.skipped' && event.stepId === stepId)
          .map((event) => rows.row(event).at(-1));
      expect(said('fix-report')).toEqual([byCondition]);
      expect(said('translate')).toEqual([byPerson]);
    } finally {
      await store.close();
    }
  });
});
