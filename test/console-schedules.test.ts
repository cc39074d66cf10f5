/**
 * The console's schedules page: each schedule's timing, next slots, last run and slot history with
 * links to their runs, and pause/resume/trigger buttons that call the same Store commands as
 * `baton schedule pause|resume|trigger` (session and CSRF token required, as for every action).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console/console-server.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { csrfOf, startTestConsole, withSession } from './helpers/console.js';

const T0 = Date.parse('2026-12-03T00:00:00Z');
const plan = validatePlanObject({ name: 'report', steps: [{ id: 'fetch', fn: 'noop' }] }, 'report');
const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: withSession({ 'content-type': 'application/x-www-form-urlencoded' }),
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual' as const,
});

describe('console: schedules', () => {
  let dir: string;
  let store: SqliteStore;
  let console: RunningConsole;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-console-sched-'));
    store = SqliteStore.open(join(dir, 'baton.db'));
    await store.addSchedule({
      name: 'daily-report',
      plan,
      planHash: 'h',
      inputs: {},
      workspace: dir,
      rules: {
        timing: { cron: '0 8 * * *', tz: 'Asia/Shanghai' },
        overlap: 'skip',
        catchUpMs: 3_600_000,
        startAt: null,
        endAt: null,
        shadow: true,
      },
      now: T0 - 1,
    });
    // The 08:00 Shanghai slot of 3 December is ticked: its run exists.
    await store.cycle({
      owner: 'w',
      now: T0 + 1,
      leaseMs: 1000,
      completions: [],
      claimLimit: 0,
      random: () => 0,
    });
    console = await startTestConsole(store, join(dir, 'home'));
  });
  afterEach(async () => {
    await console.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists schedules with their next slots and slot history, linking each run', async () => {
    expect((await fetch(`${console.origin}/schedules`)).status).toBe(401);
    const page = await (await fetch(`${console.origin}/schedules`, { headers: withSession() })).text();
    expect(page).toContain('data-schedule="daily-report"');
    expect(page).toContain('cron &quot;0 8 * * *&quot; (Asia/Shanghai)');
    expect(page).toContain('href="/runs/daily-report-20261203T000000Z"');
    // A shadow schedule says so, and its slot's run is a shadow run.
    expect(page).toContain('overlap skip, shadow runs');
    expect((await store.getRun('daily-report-20261203T000000Z'))?.plan.shadow).toBe(true);
    expect(page).toMatch(/class="next">\d{4}-\d\d-\d\d 00:00:00Z, /);
    expect(page).toContain('data-action="pause"');
  });

  it('pauses, resumes and triggers through the same Store commands, with the CSRF token', async () => {
    const csrf = await csrfOf(console.origin, '/schedules');
    expect(
      (await fetch(`${console.origin}/schedules/daily-report/pause`, form({ csrf: `${csrf}x` }))).status,
    ).toBe(403);
    expect((await store.getSchedule('daily-report'))?.paused).toBe(false);
    const paused = await fetch(`${console.origin}/schedules/daily-report/pause`, form({ csrf }));
    expect(paused.status).toBe(303);
    expect(paused.headers.get('location')).toBe('/schedules');
    expect((await store.getSchedule('daily-report'))?.paused).toBe(true);
    const page = await (await fetch(`${console.origin}/schedules`, { headers: withSession() })).text();
    expect(page).toContain('data-action="resume"');
    await fetch(`${console.origin}/schedules/daily-report/resume`, form({ csrf }));
    expect((await store.getSchedule('daily-report'))?.paused).toBe(false);
    await fetch(`${console.origin}/schedules/daily-report/trigger`, form({ csrf }));
    const last = (await store.getSchedule('daily-report'))?.lastRun?.id;
    expect(last).toMatch(/^daily-report-\d{8}T\d{6}Z-manual$/);
    expect(await store.getRun(last!)).not.toBeNull();
  });
});
