/**
 * The human and heartbeat commands end to end: retry, skip, cancel, run --detach with check,
 * durable delays, init, and the file modes of what Baton stores.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadPlanFile } from '../src/workflow/load-plan-file.js';
import { parsePlanText } from '../src/workflow/parse-plan-text.js';
import {
  agentCommand,
  expectExit,
  readCounts,
  removeTempDirs,
  runBaton,
  runStatus,
  stopProcesses,
  timeline,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir, stepOf } from './helpers/plans.js';

const TEST_TIMEOUT = 60_000;

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

describe('baton retry, skip, cancel, check, init', () => {
  it(
    'status of a run of more than 100 steps: counts and the steps that need a look; --all lists every one',
    async () => {
      const { dir, home } = planDir();
      const steps = [
        { id: 'first', instruction: 'go', retry: { maxAttempts: 1 } },
        ...Array.from({ length: 119 }, (_, i) => ({
          id: `next-${i}`,
          instruction: 'then',
          dependsOn: ['first'],
        })),
      ];
      const file = writePlan(dir, fixturePlan(steps, {}, 'agent-flaky'));
      const env = { FLAKY_FAILS: '1', FLAKY_COUNTER: join(dir, 'flaky-count') };
      expectExit(await runBaton(['run', file, '--id', 'wide'], { home, env }), 1);

      const lines = expectExit(await runBaton(['status', 'wide'], { home }), 1)
        .stdout.trimEnd()
        .split('\n');
      expect(lines[0]).toMatch(/^run wide {2}plan cli-test {2}blocked {2}0\/120 steps done {2}1 attempts$/);
      expect(lines).toContain('steps: 119 pending, 1 blocked');
      const table = lines.filter((line) => /^(STEP|first|next-\d+) {2}/.test(line));
      expect(table).toHaveLength(2);
      expect(table[1]).toMatch(/^first +blocked +1 +- +/);
      expect(lines).toContain('119 pending steps not listed: baton status wide --all lists every step');
      expect(lines.some((line) => line.startsWith('first is blocked: '))).toBe(true);

      const all = expectExit(await runBaton(['status', 'wide', '--all'], { home }), 1).stdout;
      expect(all.split('\n').filter((line) => /^(first|next-\d+) {2}/.test(line))).toHaveLength(120);
      expect(all).not.toContain('steps not listed');
      expect(all).not.toContain('steps: ');
      const json = await runStatus(home, 'wide');
      expect(json.steps).toHaveLength(120);
      expect(stepOf(json, 'next-118')).toMatchObject({ status: 'pending', dependsOn: ['first'] });
    },
    TEST_TIMEOUT,
  );

  it(
    'runs a blocked step again after baton retry and baton check',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan(
          [
            { id: 'first', instruction: 'go', retry: { maxAttempts: 1 } },
            { id: 'after', instruction: 'then', dependsOn: ['first'] },
          ],
          {},
          'agent-flaky',
        ),
      );
      const env = { FLAKY_FAILS: '1', FLAKY_COUNTER: join(dir, 'flaky-count') };
      expectExit(await runBaton(['run', file, '--id', 'rty'], { home, env }), 1);
      expect(stepOf(await runStatus(home, 'rty'), 'first').status).toBe('blocked');

      const retry = await runBaton(['retry', 'rty', 'first'], { home });
      expectExit(retry, 0);
      expect(retry.stdout).toContain('step first will run again');
      expect(stepOf(await runStatus(home, 'rty'), 'first').status).toBe('ready');

      const check = await runBaton(['check'], { home, env });
      expectExit(check, 0);
      const run = await runStatus(home, 'rty');
      expect(run.status).toBe('succeeded');
      expect(stepOf(run, 'first').attempt).toBe(2);
      expect(stepOf(run, 'after').status).toBe('succeeded');
    },
    TEST_TIMEOUT,
  );

  it(
    'lets the dependents of a skipped step run',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan([
          {
            id: 'broken',
            instruction: 'fail',
            agent: { command: agentCommand('agent-fail') },
            retry: { maxAttempts: 1 },
          },
          { id: 'next', instruction: 'go on', dependsOn: ['broken'] },
        ]),
      );
      expectExit(await runBaton(['run', file, '--id', 'skp'], { home }), 1);
      expect(stepOf(await runStatus(home, 'skp'), 'next').status).toBe('pending');

      const skip = await runBaton(['skip', 'skp', 'broken'], { home });
      expectExit(skip, 0);
      expect(stepOf(await runStatus(home, 'skp'), 'next').status).toBe('ready');
      expectExit(await runBaton(['check'], { home }), 0);
      const run = await runStatus(home, 'skp');
      expect(run.status).toBe('succeeded');
      expect(run.steps.map((s) => s.status)).toEqual(['skipped', 'succeeded']);
    },
    TEST_TIMEOUT,
  );

  it(
    'cancels a stored run: nothing of it runs afterwards',
    async () => {
      const { dir, home } = planDir();
      const counts = join(dir, 'counts');
      const file = writePlan(dir, fixturePlan([{ id: 'only', instruction: 'count' }], {}, 'agent-count'));
      expectExit(await runBaton(['run', file, '--id', 'cnl', '--detach'], { home }), 0);
      const cancel = await runBaton(['cancel', 'cnl'], { home });
      expectExit(cancel, 0);
      expect(cancel.stdout).toContain('run cnl cancelled');

      const status = await runBaton(['status', 'cnl'], { home });
      expectExit(status, 1);
      const run = await runStatus(home, 'cnl');
      expect(run.status).toBe('cancelled');
      expect(stepOf(run, 'only').status).toBe('cancelled');

      const check = await runBaton(['check'], { home, env: { COUNT_FILE: counts } });
      expectExit(check, 0);
      expect(check.stdout).toContain('nothing due');
      expect(readCounts(counts)).toEqual([]);
      expect((await runStatus(home, 'cnl')).status).toBe('cancelled');
    },
    TEST_TIMEOUT,
  );

  it(
    'stores a run with --detach and lets baton check drive it to the end',
    async () => {
      const { dir, home } = planDir();
      const counts = join(dir, 'counts');
      const file = writePlan(
        dir,
        fixturePlan(
          [
            { id: 'a', instruction: 'a' },
            { id: 'b', instruction: 'b', dependsOn: ['a'] },
            { id: 'c', instruction: 'c', dependsOn: ['b'] },
          ],
          {},
          'agent-count',
        ),
      );
      const env = { COUNT_FILE: counts };
      const detach = await runBaton(['run', file, '--id', 'det', '--detach'], { home, env });
      expectExit(detach, 0);
      expect(detach.stdout).toContain('run det stored');
      expect(readCounts(counts)).toEqual([]);
      expect((await runStatus(home, 'det')).status).toBe('running');

      const check = await runBaton(['check'], { home, env });
      expectExit(check, 0);
      expect((await runStatus(home, 'det')).status).toBe('succeeded');
      expect(readCounts(counts).map((c) => `${c.run} ${c.step} ${c.attempt}`)).toEqual([
        'det a 1',
        'det b 1',
        'det c 1',
      ]);
      const again = await runBaton(['check'], { home, env });
      expectExit(again, 0);
      expect(again.stdout).toContain('nothing due');
      expect(readCounts(counts)).toHaveLength(3);
    },
    TEST_TIMEOUT,
  );

  it(
    'leaves a step with delayBeforeMs 1h for later: check exits at once',
    async () => {
      const { dir, home } = planDir();
      const counts = join(dir, 'counts');
      const file = writePlan(
        dir,
        fixturePlan(
          [
            { id: 'now', instruction: 'now' },
            { id: 'later', instruction: 'later', dependsOn: ['now'], delayBeforeMs: '1h' },
          ],
          {},
          'agent-count',
        ),
      );
      const env = { COUNT_FILE: counts };
      expectExit(await runBaton(['run', file, '--id', 'dly', '--detach'], { home, env }), 0);
      // The step is due in an hour: a check that slept for it would outlive runBaton's 60 s and fail.
      const check = await runBaton(['check'], { home, env });
      expectExit(check, 0);
      expect(readCounts(counts).map((c) => c.step)).toEqual(['now']);

      const run = await runStatus(home, 'dly');
      expect(run.status).toBe('running');
      const later = stepOf(run, 'later');
      expect(later.status).toBe('ready');
      const events = await timeline(home, 'dly');
      const nowDone = events.find((e) => e.type === 'step.succeeded' && e.stepId === 'now')!.at;
      expect(later.dueAt).toBe(nowDone + 3_600_000);

      const status = await runBaton(['status', 'dly'], { home });
      expectExit(status, 0);
      const dueText = new Date(later.dueAt!).toISOString().slice(0, 16).replace('T', ' ');
      expect(status.stdout).toMatch(new RegExp(`later\\s+ready\\s+0\\s+${dueText}`));

      const second = await runBaton(['check'], { home, env });
      expectExit(second, 0);
      expect(second.stdout).toContain('nothing due');
      expect(readCounts(counts)).toHaveLength(1);
    },
    TEST_TIMEOUT,
  );

  it(
    'baton init writes a valid starter plan and refuses to overwrite it',
    async () => {
      const { dir } = planDir();
      const target = join(dir, 'project');
      const first = await runBaton(['init', target]);
      expectExit(first, 0);
      const planFile = join(target, 'baton.plan.yaml');
      expect(existsSync(planFile)).toBe(true);
      expect(first.stdout).toContain(`wrote ${planFile}`);
      const { plan: starter } = await loadPlanFile(planFile);
      expect(starter.steps.map((s) => s.id)).toEqual(['research', 'summarise', 'report']);
      // Its commented examples (a result file, a condition, a wait) are a valid plan once uncommented.
      const uncommented = readFileSync(planFile, 'utf8').replace(/^ {2}# (- | {2})/gm, '  $1');
      const more = parsePlanText(uncommented, 'baton.plan.yaml');
      expect(more.steps.map((s) => s.id)).toEqual([
        'research',
        'summarise',
        'report',
        'check',
        'fix',
        'approve-send',
        'send',
      ]);
      expect(more.steps.find((s) => s.id === 'approve-send')?.kind).toBe('wait');

      const before = readFileSync(planFile);
      const second = await runBaton(['init', target]);
      expectExit(second, 2);
      expect(second.stderr).toMatch(/^baton: .*baton\.plan\.yaml already exists/);
      expect(readFileSync(planFile).equals(before)).toBe(true);
    },
    TEST_TIMEOUT,
  );

  it(
    'creates the database and the attempt logs with mode 0600',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan([
          { id: 'a', instruction: 'a' },
          { id: 'b', instruction: 'b', dependsOn: ['a'] },
        ]),
      );
      expectExit(await runBaton(['run', file, '--id', 'mode'], { home }), 0);
      const mode = (path: string) => statSync(path).mode & 0o777;
      for (const name of readdirSync(home).filter((n) => n.startsWith('baton.db'))) {
        expect([name, mode(join(home, name))]).toEqual([name, 0o600]);
      }
      const logs = ['a', 'b'].map((step) => join(home, 'runs', 'mode', step, 'attempt-1.log'));
      for (const log of logs) expect([log, mode(log)]).toEqual([log, 0o600]);
      expect(mode(home) & 0o077).toBe(0);
    },
    TEST_TIMEOUT,
  );
});
