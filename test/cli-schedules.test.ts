/**
 * `baton schedule …` end to end with the built command: adding a schedule stores its plan
 * snapshot (the file may go), `list` shows the next three slots, `preview` shows when an
 * expression fires across daylight saving, `baton check` starts the due slot's run and `status`
 * names its schedule and slot; bad input is refused with exit 2, one message naming the field, and
 * nothing stored.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { slotRunId } from '../src/core/schedule/schedule-rules.js';
import { expectExit, removeTempDirs, repoRoot, runBaton, waitFor, writePlan } from './helpers/cli.js';
import { fixturePlan, planDir } from './helpers/plans.js';
import { scheduleAddedEarlier } from './helpers/schedules.js';

afterAll(() => removeTempDirs());

const oneStep = () =>
  fixturePlan([{ id: 'fetch', instruction: 'fetch {{inputs.topic}}' }], {
    name: 'report',
    inputs: { topic: { default: 'rivals' } },
  });

describe('baton schedule', () => {
  it('refuses bad input with exit 2 and one message naming the field, storing nothing', async () => {
    const { dir, home } = planDir('baton-sched-bad-');
    const plan = writePlan(dir, oneStep());
    const add = (...args: string[]) =>
      runBaton(['schedule', 'add', 'daily', plan, ...args], { home, cwd: dir });
    const cases: [string[], RegExp][] = [
      [['--cron', '0 25 * * *'], /--cron "0 25 \* \* \*": Invalid value for hour: 25/],
      [['--cron', '0 8 * *'], /--cron "0 8 \* \*":/],
      [['--cron', '0 8 * * *', '--tz', 'Asia/Shangai'], /--tz "Asia\/Shangai": unknown time zone/],
      [['--every', '500ms'], /--every: a schedule fires at most once a minute/],
      [
        ['--every', '30s'],
        /--every: a schedule fires at most once a minute \(the minimum interval, 60000 ms\): give 1m or more \(e\.g\. 5m\), got 30000 ms/,
      ],
      [
        ['--cron', '*/10 * * * * *'],
        /--cron "\*\/10 \* \* \* \* \*": its slots come 10s apart; a schedule fires at most once a minute/,
      ],
      [['--every', '1s', '--cron', '* * * * *'], /give either --cron .* or --every .*not both/],
      [[], /give either --cron .* or --every/],
      [['--every', '1m', '--catch-up', 'soon'], /--catch-up/],
      [['--every', '1m', '--start-at', 'tomorrowish'], /--start-at "tomorrowish": expected a time/],
      [['--cron', '0 0 31 2 *'], /never fires/],
    ];
    for (const [args, message] of cases) {
      const result = expectExit(await add(...args), 2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(message);
    }
    // A seconds field of one value fires once a minute at most: taken.
    const preview = ['schedule', 'preview', '--cron', '30 */5 * * * *', '--count', '2', '--json'];
    expect(JSON.parse(expectExit(await runBaton(preview), 0).stdout)).toHaveLength(2);
    const badName = expectExit(
      await runBaton(['schedule', 'add', 'bad name', plan, '--every', '1m'], { home }),
      2,
    );
    expect(badName.stderr).toContain('schedule name "bad name" must match');
    const badPlan = writePlan(
      dir,
      { name: 'x', steps: [{ id: 'a', instruction: 'x', dependsOn: ['b'] }] },
      { name: 'bad.yaml' },
    );
    expect(
      expectExit(await runBaton(['schedule', 'add', 'daily', badPlan, '--every', '1m'], { home }), 2).stderr,
    ).toContain('unknown step "b"');
    // Nothing was stored: no store was even made.
    expect(existsSync(home)).toBe(false);
    expectExit(await add('--every', '1h'), 0);
    const again = expectExit(await add('--every', '2h'), 2);
    expect(again.stderr).toContain(
      'a schedule named "daily" exists already: change it with baton schedule update daily',
    );
    const listed = JSON.parse(expectExit(await runBaton(['schedule', 'list', '--json'], { home }), 0).stdout);
    expect(listed).toHaveLength(1);
    expect(listed[0].timing).toBe('every 1h');
    const unknown = expectExit(await runBaton(['schedule', 'pause', 'nope'], { home }), 2);
    expect(unknown.stderr).toContain('no schedule named "nope"');
  });

  it("docs/schedules.md: the daily report's preview prints what the page shows, and its first run id", async () => {
    const page = readFileSync(join(repoRoot, 'docs', 'schedules.md'), 'utf8');
    const line = page.split('\n').find((l) => l.startsWith('baton schedule preview '))!;
    const args = [...line.slice('baton '.length).matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
    const shown = /<!-- schedule-preview-output -->\n```text\n([\s\S]*?)```/.exec(page)![1]!;
    expect(expectExit(await runBaton(args), 0).stdout).toBe(shown);
    const first = Date.parse(`${shown.slice(0, 19).replace(' ', 'T')}Z`);
    const runId = slotRunId('daily-report', first);
    expect(runId).toBe('daily-report-20261203T000000Z');
    expect(page).toContain(`run \`${runId}\``);
  });

  it('previews a cron expression in a time zone across daylight saving', async () => {
    const result = expectExit(
      await runBaton([
        'schedule',
        'preview',
        '--cron',
        '30 2 * * *',
        '--tz',
        'Europe/Berlin',
        '--from',
        '2026-10-24T12:00:00Z',
        '--count',
        '3',
        '--json',
      ]),
      0,
    );
    expect(JSON.parse(result.stdout)).toEqual([
      { at: '2026-10-25T00:30:00.000Z', local: '2026-10-25 02:30:00', tz: 'Europe/Berlin' },
      { at: '2026-10-26T01:30:00.000Z', local: '2026-10-26 02:30:00', tz: 'Europe/Berlin' },
      { at: '2026-10-27T01:30:00.000Z', local: '2026-10-27 02:30:00', tz: 'Europe/Berlin' },
    ]);
  });

  it('--priority: refused outside 0..9; the runs of its slots have it, update changes it', async () => {
    const { dir, home } = planDir('baton-sched-prio-');
    const plan = writePlan(dir, oneStep());
    const bad = expectExit(
      await runBaton(['schedule', 'add', 'p', plan, '--every', '1m', '--priority', 'high'], {
        home,
        cwd: dir,
      }),
      2,
    );
    expect(bad.stderr).toMatch(/--priority: expected a priority, a whole number from 0 \(default\) to 9/);
    expectExit(
      await runBaton(['schedule', 'add', 'p', plan, '--every', '1m', '--priority', '6'], { home, cwd: dir }),
      0,
    );
    const priorityOfSlotRun = async () => {
      const started = JSON.parse(
        expectExit(await runBaton(['schedule', 'trigger', 'p', '--json'], { home }), 0).stdout,
      );
      const status = await runBaton(['status', started.id, '--json'], { home });
      return JSON.parse(status.stdout).priority;
    };
    expect(await priorityOfSlotRun()).toBe(6);
    expectExit(await runBaton(['schedule', 'update', 'p', '--priority', '2'], { home, cwd: dir }), 0);
    expect(await priorityOfSlotRun()).toBe(2);
  });

  it('stores the plan snapshot; check starts the due slot, status names its schedule and slot', async () => {
    const { dir, home } = planDir('baton-sched-run-');
    const plan = writePlan(dir, oneStep());
    const added = expectExit(
      await runBaton(['schedule', 'add', 'often', plan, '--every', '1m', '-i', 'topic=prices', '--json'], {
        home,
        cwd: dir,
      }),
      0,
    );
    const view = JSON.parse(added.stdout);
    expect(view.nextFireTimes).toHaveLength(3);
    expect(view.inputs).toEqual({ topic: 'prices' });
    // The file may go: the schedule runs its snapshot.
    rmSync(plan);
    // As if added a minute ago: its first slot is due (no test waits for a real minute).
    scheduleAddedEarlier(home, 'often', 60_000);
    const runId = await waitFor(
      async () => {
        await runBaton(['check', '--quiet'], { home, cwd: dir });
        const list = JSON.parse((await runBaton(['schedule', 'list', '--json'], { home })).stdout);
        return list[0].lastRun?.id as string | undefined;
      },
      30_000,
      'a run of the schedule',
      100,
    );
    expect(runId).toMatch(/^often-\d{8}T\d{6}Z$/);
    await runBaton(['schedule', 'pause', 'often'], { home });
    await waitFor(
      async () => {
        await runBaton(['check', '--quiet'], { home, cwd: dir });
        const run = JSON.parse((await runBaton(['status', runId, '--json'], { home })).stdout);
        return run.status === 'succeeded' ? run : null;
      },
      30_000,
      'the run succeeded',
      100,
    );
    const status = JSON.parse(expectExit(await runBaton(['status', runId, '--json'], { home }), 0).stdout);
    expect(status.schedule).toMatchObject({ name: 'often', manual: false });
    expect(status.inputs).toEqual({ topic: 'prices' });
    const text = expectExit(await runBaton(['status', runId], { home }), 0).stdout;
    expect(text).toContain(`schedule: often, slot ${status.schedule.slotAt}`);
    const shown = JSON.parse(
      expectExit(await runBaton(['schedule', 'show', 'often', '--json'], { home }), 0).stdout,
    );
    expect(shown.paused).toBe(true);
    expect(shown.slots.some((s: { runId: string | null }) => s.runId === runId)).toBe(true);
    const triggered = JSON.parse(
      expectExit(await runBaton(['schedule', 'trigger', 'often', '--json'], { home }), 0).stdout,
    );
    expect(triggered.id).toMatch(/^often-\d{8}T\d{6}Z-manual$/);
    // A new version of the plan, and a new timing: the options given replace theirs.
    writePlan(
      dir,
      { ...oneStep(), steps: [{ id: 'fetch', instruction: 'fetch it again' }] },
      { name: 'v2.yaml' },
    );
    const updated = JSON.parse(
      expectExit(
        await runBaton(
          ['schedule', 'update', 'often', '--plan', join(dir, 'v2.yaml'), '--every', '1h', '--json'],
          {
            home,
            cwd: dir,
          },
        ),
        0,
      ).stdout,
    );
    expect(updated.planHash).not.toBe(view.planHash);
    expect(updated.timing).toBe('every 1h');
    expect(updated.paused).toBe(true);
    expectExit(await runBaton(['schedule', 'rm', 'often'], { home }), 0);
    expect(JSON.parse((await runBaton(['schedule', 'list', '--json'], { home })).stdout)).toEqual([]);
  });
});
