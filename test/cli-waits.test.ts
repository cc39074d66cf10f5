/**
 * Steps that wait for a person or an event, end to end through the built CLI: `check` and `status`
 * show what they wait for and the exact commands; `approve`/`reject <run> <step>` and `send` end
 * them; a timeout fires from `check` once its time has come; bad input exits 2 and stores nothing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  expectExit,
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

/** The daily report: its `send` step runs only once a person approved it. */
function reportPlan(wait: Record<string, unknown> = {}) {
  return fixturePlan(
    [
      { id: 'draft', instruction: 'write the report' },
      {
        id: 'approve-send',
        dependsOn: ['draft'],
        wait: { for: 'approval', prompt: 'Send the report for {{inputs.day}}?', ...wait },
      },
      { id: 'send', instruction: 'send it', dependsOn: ['approve-send'] },
    ],
    { inputs: { day: { default: 'monday' } } },
  );
}

describe('baton approve/reject <run> <step>, send, and waiting steps in check and status', () => {
  it(
    'check shows a WAITING line with the prompt and the commands (exit 0); approve releases the step after it',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(dir, reportPlan());
      expectExit(await runBaton(['run', file, '--detach', '--id', 'r1'], { home }), 0);
      const check = expectExit(await runBaton(['check'], { home }), 0);
      expect(check.stdout).toContain(
        'WAITING run r1 (cli-test): approve-send waits for approval: Send the report for monday?',
      );
      expect(check.stdout).toContain("  baton approve r1 approve-send --comment '...'");
      expect(check.stdout).toContain("  baton reject r1 approve-send --comment '...'");
      expect(stepOf(await runStatus(home, 'r1'), 'send').status).toBe('pending');
      // Nothing is due now: the idle check still says what waits (its one read lists it).
      const idle = expectExit(await runBaton(['check'], { home }), 0).stdout;
      expect(idle).toContain('WAITING run r1 (cli-test): approve-send waits for approval');
      expect(expectExit(await runBaton(['check', '--quiet'], { home }), 0).stdout).toBe('');
      const status = expectExit(await runBaton(['status', 'r1'], { home }), 0).stdout;
      expect(status).toMatch(/^approve-send +waiting /m);
      expect(status).toContain('approve-send waits for approval: Send the report for monday?');

      const approve = expectExit(
        await runBaton(['approve', 'r1', 'approve-send', '--comment', 'looks right', '--by', 'ann'], {
          home,
        }),
        0,
      );
      expect(approve.stdout).toContain('step approve-send of run r1 approved by ann');
      expectExit(await runBaton(['check'], { home }), 0);
      const run = await runStatus(home, 'r1');
      expect(run.status).toBe('succeeded');
      const approved = (await timeline(home, 'r1')).find((e) => e.type === 'step.approved');
      expect(approved).toMatchObject({ stepId: 'approve-send', by: 'ann', comment: 'looks right' });
      // Approved once: again is refused, exit 2.
      expectExit(await runBaton(['approve', 'r1', 'approve-send'], { home }), 2);
    },
    TEST_TIMEOUT,
  );

  it(
    'reject skips the step after it with the reason; the run ends succeeded and check exits 0',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(dir, reportPlan());
      expectExit(await runBaton(['run', file, '--detach', '--id', 'r1'], { home }), 0);
      expectExit(await runBaton(['check'], { home }), 0);
      expectExit(await runBaton(['reject', 'r1', 'approve-send', '--comment', 'numbers off'], { home }), 0);
      expect(expectExit(await runBaton(['check', '--quiet'], { home }), 0).stdout).toBe('');
      const run = await runStatus(home, 'r1');
      expect(run.status).toBe('succeeded');
      expect(stepOf(run, 'send').status).toBe('skipped');
      const skipped = (await timeline(home, 'r1')).find(
        (e) => e.type === 'step.skipped' && e.stepId === 'send',
      );
      expect(skipped?.reason).toContain('rejected by');
      expect(skipped?.reason).toContain('numbers off');
    },
    TEST_TIMEOUT,
  );

  it(
    'a timeout whose time has come fires from check: onTimeout reject skips the steps after it',
    async () => {
      const { dir, home } = planDir();
      // A deadline already past: the first check starts the wait, and its timeout is due at once.
      const file = writePlan(dir, reportPlan({ timeout: '2020-01-01T00:00:00+08:00', onTimeout: 'reject' }));
      expectExit(await runBaton(['run', file, '--detach', '--id', 'r1'], { home }), 0);
      expectExit(await runBaton(['check'], { home }), 0);
      const run = await runStatus(home, 'r1');
      expect(stepOf(run, 'approve-send').status).toBe('skipped');
      expect(stepOf(run, 'send').status).toBe('skipped');
      expect((await timeline(home, 'r1')).find((e) => e.type === 'step.wait_timed_out')).toMatchObject({
        action: 'reject',
      });
    },
    TEST_TIMEOUT,
  );

  it(
    'send: an event sent before the wait is kept and taken; a payload that fails the schema exits 2 and stores nothing',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan([
          { id: 'build', instruction: 'build' },
          {
            id: 'deployed',
            dependsOn: ['build'],
            wait: {
              for: 'event',
              event: 'deployed-{{run.id}}',
              schema: { type: 'object', required: ['version'] },
            },
          },
          { id: 'announce', instruction: 'announce', dependsOn: ['deployed'] },
        ]),
      );
      expectExit(await runBaton(['run', file, '--detach', '--id', 'r1'], { home }), 0);
      const before = (await timeline(home, 'r1')).length;
      const bad = expectExit(
        await runBaton(['send', 'deployed-r1', '--run', 'r1', '--data', '{"v":1}'], { home }),
        2,
      );
      expect(bad.stderr).toContain(
        'steps.deployed.wait.schema of run r1: /: missing required property "version"',
      );
      expect((await timeline(home, 'r1')).length).toBe(before);
      const payload = join(dir, 'payload.json');
      writeFileSync(payload, '{"version":"1.2"}');
      const kept = expectExit(
        await runBaton(['send', 'deployed-r1', '--run', 'r1', '--data', `@${payload}`], { home }),
        0,
      );
      expect(kept.stdout).toContain('run r1: kept deployed-r1');
      expectExit(await runBaton(['check'], { home }), 0);
      const run = await runStatus(home, 'r1');
      expect(run.status).toBe('succeeded');
      expect((await timeline(home, 'r1')).find((e) => e.type === 'event.received')).toMatchObject({
        kept: true,
      });
      // Nothing waits for it any more.
      expectExit(await runBaton(['send', 'deployed-r1'], { home }), 2);
    },
    TEST_TIMEOUT,
  );

  it(
    'a payload holding a secret of the sender is stored masked, like every result',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(
        dir,
        fixturePlan([{ id: 'deployed', wait: { for: 'event', event: 'deployed' } }]),
      );
      expectExit(await runBaton(['run', file, '--detach', '--id', 'r1'], { home }), 0);
      const env = { DEPLOY_TOKEN: 'tok-7f3a9c1e5b', BATON_SECRET_ENV: 'DEPLOY_TOKEN' };
      expectExit(
        await runBaton(['send', 'deployed', '--run', 'r1', '--data', '{"token":"tok-7f3a9c1e5b"}'], {
          home,
          env,
        }),
        0,
      );
      expectExit(await runBaton(['check'], { home }), 0);
      const db = new Database(join(home, 'baton.db'), { readonly: true });
      try {
        const stored = db
          .prepare("SELECT result_json FROM steps WHERE step_id = 'deployed'")
          .pluck()
          .get() as string;
        expect(JSON.parse(stored).value).toEqual({ token: '[redacted]' });
      } finally {
        db.close();
      }
    },
    TEST_TIMEOUT,
  );

  it(
    'approve and reject of a whole proposed run keep working beside the step form',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(dir, reportPlan());
      expectExit(await runBaton(['propose', file, '--id', 'p1'], { home }), 0);
      expectExit(await runBaton(['propose', file, '--id', 'p2'], { home }), 0);
      expect(expectExit(await runBaton(['approve', 'p1'], { home }), 0).stdout).toContain('run p1 approved');
      expect(expectExit(await runBaton(['reject', 'p2'], { home }), 0).stdout).toContain('run p2 rejected');
      expect((await runStatus(home, 'p1')).status).toBe('running');
      expect((await runStatus(home, 'p2')).status).toBe('cancelled');
    },
    TEST_TIMEOUT,
  );

  it(
    'refuses a wait step with a body, an unknown run and a step that is not waiting: exit 2, one message',
    async () => {
      const { dir, home } = planDir();
      const file = writePlan(dir, fixturePlan([{ id: 'a', instruction: 'x', wait: { for: 'approval' } }]));
      const bad = expectExit(await runBaton(['run', file, '--detach'], { home }), 2);
      expect(bad.stderr).toContain(
        'steps.a.instruction: a wait step has no body and runs nothing: remove "instruction"',
      );
      const good = writePlan(dir, reportPlan(), { name: 'good.yaml' });
      expectExit(await runBaton(['run', good, '--detach', '--id', 'r1'], { home }), 0);
      expect(expectExit(await runBaton(['approve', 'nope', 'approve-send'], { home }), 2).stderr).toContain(
        'no run with id "nope"',
      );
      expect(expectExit(await runBaton(['approve', 'r1', 'approve-send'], { home }), 2).stderr).toContain(
        'step approve-send of run r1 is pending: only a waiting step can be approved',
      );
      expect(expectExit(await runBaton(['reject', 'r1', 'draft'], { home }), 2).stderr).toContain(
        '(a step of kind agent, not a wait step)',
      );
      // --comment belongs to the step form: approving the whole run with it is refused.
      expect(expectExit(await runBaton(['approve', 'r1', '--comment', 'x'], { home }), 2).stderr).toContain(
        '--comment is for a step that waits for approval',
      );
      expect((await timeline(home, 'r1')).map((e) => e.type)).toEqual(['run.created']);
    },
    TEST_TIMEOUT,
  );
});
