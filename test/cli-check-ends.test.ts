/**
 * `baton check` ends: it takes what is due when it starts (schedule slots and steps) and what that
 * work makes due without a timer, then exits. Hundreds of schedules, every-second ones stored
 * before the minimum interval included, cannot keep it going: one check starts at most
 * SLOT_RUNS_PER_CHECK runs of schedules and says it left the others, which the next check starts.
 * A delay, a retry's backoff and a wait's timeout that come due while it runs are the next check's.
 * Time is injected by storing the schedules as if added earlier; nothing waits a fixed time.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import type { ScheduleRules } from '../src/core/schedule/schedule-rules.js';
import { SLOT_RUNS_PER_CHECK } from '../src/core/schedule/schedule-rules.js';
import {
  batonJson,
  expectExit,
  removeTempDirs,
  runBaton,
  runStatus,
  spawnBaton,
  stopProcesses,
  tempDir,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir, stepOf } from './helpers/plans.js';
import { addSchedules, storedRunIds } from './helpers/schedules.js';

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

const rules = (partial: Partial<ScheduleRules>): ScheduleRules => ({
  timing: { everyMs: 60_000 },
  overlap: 'skip',
  catchUpMs: null,
  startAt: null,
  endAt: null,
  ...partial,
});

interface CheckJson {
  attemptsStarted: number;
  scheduleRunsStarted: number;
  scheduleSlotsLeft: boolean;
}

describe('baton check ends', () => {
  it('300 schedules due at once: one check starts at most its bound and says so, the next starts the rest', async () => {
    const { dir, home } = planDir('baton-check-ends-');
    // Added ten minutes ago, every minute (the minimum), catch-up none: each has one slot to start.
    await addSchedules(home, dir, {
      prefix: 'm',
      count: 300,
      rules: rules({}),
      addedAt: Date.now() - 600_000,
    });

    const first = expectExit(await runBaton(['check'], { home, cwd: dir, timeoutMs: 180_000 }), 0);
    expect(first.stdout).toContain(
      `schedule slots left due for the next check: one check starts at most ${SLOT_RUNS_PER_CHECK} runs of schedules, this one started ${SLOT_RUNS_PER_CHECK}`,
    );
    expect(await storedRunIds(home)).toHaveLength(SLOT_RUNS_PER_CHECK);

    const second = await batonJson<CheckJson>(['check'], { home, cwd: dir, timeoutMs: 180_000 });
    expect(second).toMatchObject({
      scheduleRunsStarted: 300 - SLOT_RUNS_PER_CHECK,
      scheduleSlotsLeft: false,
    });
    const ids = await storedRunIds(home);
    expect(ids).toHaveLength(300);
    // One run per schedule: its slot's.
    expect(new Set(ids.map((id) => id.replace(/-\d{8}T\d{6}Z$/, ''))).size).toBe(300);

    const third = await batonJson<CheckJson>(['check'], { home, cwd: dir });
    expect(third).toMatchObject({ scheduleRunsStarted: 0, scheduleSlotsLeft: false });
  }, 600_000);

  it('300 schedules firing every second (stored before the minimum): a check still ends', async () => {
    const { dir, home } = planDir('baton-check-ends-');
    // overlap allow: each second, each schedule has a slot that starts a run, whose agent step the
    // check runs; while it does, more seconds come.
    await addSchedules(home, dir, {
      prefix: 's',
      count: 300,
      rules: rules({ timing: { everyMs: 1000 }, overlap: 'allow' }),
      addedAt: Date.now() - 2000,
      plan: validatePlanObject(fixturePlan([{ id: 'work', instruction: 'go' }], { name: 'work' }), 'work'),
    });
    const check = await batonJson<CheckJson>(['check'], { home, cwd: dir, timeoutMs: 240_000 });
    expect(check.scheduleSlotsLeft).toBe(true);
    expect(check.scheduleRunsStarted).toBe(SLOT_RUNS_PER_CHECK);
    expect(check.attemptsStarted).toBe(SLOT_RUNS_PER_CHECK);
    expect(await storedRunIds(home)).toHaveLength(SLOT_RUNS_PER_CHECK);
  }, 300_000);

  it('leaves a delay, a backoff and a wait timeout that come due while it runs to the next check', async () => {
    const { dir, home } = planDir('baton-check-ends-');
    const gates = tempDir('baton-check-gates-');
    // A step that keeps the check busy until the test opens its gate.
    const hold = writePlan(dir, fixturePlan([{ id: 'hold', instruction: 'hold' }], {}, 'agent-gated'), {
      name: 'hold.yaml',
    });
    expectExit(await runBaton(['run', hold, '--detach', '--id', 'hold'], { home, cwd: dir }), 0);
    const check = spawnBaton(['check', '--json'], { home, cwd: dir, env: { GATE_DIR: gates } });
    await waitFor(
      async () => stepOf(await runStatus(home, 'hold'), 'hold').status === 'running',
      60_000,
      'hold runs',
    );

    // Stored after the check started: each becomes due by a timer while it runs.
    const later = writePlan(dir, fixturePlan([{ id: 'later', instruction: 'go', delayBeforeMs: '1s' }]), {
      name: 'later.yaml',
    });
    const retry = writePlan(
      dir,
      fixturePlan(
        [
          {
            id: 'flaky',
            instruction: 'fail',
            retry: { maxAttempts: 2, initialDelayMs: '1s', maxDelayMs: '1s' },
          },
        ],
        {},
        'agent-fail',
      ),
      { name: 'retry.yaml' },
    );
    const wait = writePlan(
      dir,
      { name: 'ask', steps: [{ id: 'ask', wait: { for: 'approval', timeout: '1s', onTimeout: 'skip' } }] },
      { name: 'ask.yaml' },
    );
    for (const [file, id] of [
      [later, 'later'],
      [retry, 'retry'],
      [wait, 'ask'],
    ] as const)
      expectExit(await runBaton(['run', file, '--detach', '--id', id], { home, cwd: dir }), 0);
    // The check runs the retry's first attempt and starts the wait (no timer made them due): their
    // backoff and timeout are due times too. Once the delay, the backoff and the timeout have all
    // come, the held step is let go.
    const dueTimes = await waitFor(
      async () => {
        const later = stepOf(await runStatus(home, 'later'), 'later');
        const flaky = stepOf(await runStatus(home, 'retry'), 'flaky');
        const ask = stepOf(await runStatus(home, 'ask'), 'ask');
        if (flaky.attempt < 1 || flaky.status === 'running' || ask.status === 'ready') return null;
        return [later.dueAt, flaky.dueAt, ask.dueAt].filter((at): at is number => at !== null);
      },
      60_000,
      'the retry failed once and the wait started',
      100,
    );
    const lastDue = Math.max(...dueTimes);
    await waitFor(() => Date.now() > lastDue, 60_000, 'the delay, the backoff and the timeout came', 100);
    writeFileSync(join(gates, '1'), '');
    expect((await check.exited).code).toBe(0);
    expect(JSON.parse(check.stdout())).toMatchObject({ attemptsStarted: 2 });
    expect(stepOf(await runStatus(home, 'later'), 'later').status).toBe('ready');
    expect(stepOf(await runStatus(home, 'retry'), 'flaky')).toMatchObject({
      status: 'retry_wait',
      attempt: 1,
    });
    expect(stepOf(await runStatus(home, 'ask'), 'ask').status).toBe('waiting');

    // The next check takes them: the delayed step runs, the retry runs (and blocks), the wait times out.
    expectExit(await runBaton(['check', '--quiet'], { home, cwd: dir }), 1);
    expect(stepOf(await runStatus(home, 'later'), 'later').status).toBe('succeeded');
    expect(stepOf(await runStatus(home, 'retry'), 'flaky')).toMatchObject({ status: 'blocked', attempt: 2 });
    expect(stepOf(await runStatus(home, 'ask'), 'ask').status).toBe('skipped');
  }, 180_000);
});
