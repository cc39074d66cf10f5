/**
 * The payload limit (1 MiB) at the CLI's doors, through the built binary: `baton send --data @file`
 * reads a regular UTF-8 file of at most 1 MiB (never a device, a pipe or a folder, and never more
 * than one byte past the limit), `baton resolve --result <file>` the same; anything else exits 2
 * naming the limit before anything is stored. The console refuses bodies that are not UTF-8 and
 * answers 413 past its own caps.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import {
  agentCommand,
  expectExit,
  removeTempDirs,
  runBaton,
  runStatus,
  stopProcesses,
  tempDir,
  timeline,
  writePlan,
} from './helpers/cli.js';
import { csrfOf, startTestConsole, withSession } from './helpers/console.js';
import { fixturePlan, planDir, stepOf } from './helpers/plans.js';

const TEST_TIMEOUT = 60_000;
const LIMIT = /the payload limit of 1 MiB \(1048576 bytes\)/;

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

/** A run `r1` whose step `deployed` waits for the event `deploy-done`. */
async function waitingRun() {
  const { dir, home } = planDir('baton-payload-send-');
  const plan = writePlan(
    dir,
    fixturePlan([{ id: 'deployed', wait: { for: 'event', event: 'deploy-done' } }]),
  );
  expectExit(await runBaton(['run', plan, '--detach', '--id', 'r1'], { home }), 0);
  expectExit(await runBaton(['check'], { home }), 0);
  expect(stepOf(await runStatus(home, 'r1'), 'deployed').status).toBe('waiting');
  return { dir, home };
}

/** A JSON string of 50 MB (52428800 bytes): a value a step could take, were it not for its size. */
const fiftyMegabytesOfJson = () => JSON.stringify('x'.repeat(50 * 1024 * 1024 - 2));

/** The step still waits and no event was received: nothing of a refused payload was stored. */
async function expectNothingStored(home: string) {
  expect(stepOf(await runStatus(home, 'r1'), 'deployed').status).toBe('waiting');
  expect((await timeline(home, 'r1')).map((e) => e.type)).not.toContain('event.received');
}

describe('baton send --data @file: a regular UTF-8 file within the payload limit', () => {
  it(
    'refuses /dev/zero, a 50 MB file, a FIFO and a folder with exit 2 before storing anything; a good file is taken',
    async () => {
      const { dir, home } = await waitingRun();
      const send = (data: string) =>
        runBaton(['send', 'deploy-done', '--run', 'r1', '--data', data], { home });

      const zero = expectExit(await send('@/dev/zero'), 2);
      expect(zero.stderr).toContain('--data @/dev/zero: /dev/zero is not a regular file');

      const big = join(dir, 'big.json');
      writeFileSync(big, fiftyMegabytesOfJson());
      const tooBig = expectExit(await send(`@${big}`), 2);
      expect(tooBig.stderr).toContain(`--data @${big}: 52428800 bytes, more than`);
      expect(tooBig.stderr).toMatch(LIMIT);

      const fifo = join(dir, 'pipe');
      execFileSync('mkfifo', [fifo]);
      // Nobody writes to it: reading it would wait forever.
      expect(expectExit(await send(`@${fifo}`), 2).stderr).toContain('is not a regular file');
      expect(expectExit(await send(`@${dir}`), 2).stderr).toContain('is not a regular file');
      await expectNothingStored(home);

      const good = join(dir, 'good.json');
      writeFileSync(good, JSON.stringify({ version: '1.2', notes: 'é'.repeat(1000) }));
      expectExit(await send(`@${good}`), 0);
      const step = stepOf(await runStatus(home, 'r1'), 'deployed');
      expect(step.status).toBe('succeeded');
    },
    TEST_TIMEOUT,
  );

  it(
    'refuses a payload file that is not UTF-8, or just over 1 MiB, naming the file and the limit',
    async () => {
      const { dir, home } = await waitingRun();
      const latin1 = join(dir, 'latin1.json');
      writeFileSync(latin1, Buffer.from([0x22, 0x63, 0x61, 0x66, 0xe9, 0x22])); // "café" in Latin-1
      const refused = expectExit(
        await runBaton(['send', 'deploy-done', '--data', `@${latin1}`], { home }),
        2,
      );
      expect(refused.stderr).toContain(`--data @${latin1}: ${latin1} is not valid UTF-8 text`);

      // One byte over: a JSON string of 1 MiB - 1 characters between its quotes.
      const over = join(dir, 'over.json');
      writeFileSync(over, JSON.stringify('x'.repeat(1024 * 1024 - 1)));
      const overLimit = expectExit(
        await runBaton(['send', 'deploy-done', '--data', `@${over}`], { home }),
        2,
      );
      expect(overLimit.stderr).toContain('1048577 bytes');
      expect(overLimit.stderr).toMatch(LIMIT);
      await expectNothingStored(home);
    },
    TEST_TIMEOUT,
  );
});

describe('baton resolve --result <file>: the same limit', () => {
  it(
    'refuses a 50 MB result file and /dev/zero with exit 2; the step stays blocked',
    async () => {
      const { dir, home } = planDir('baton-payload-resolve-');
      const plan = writePlan(
        dir,
        fixturePlan([{ id: 'a', instruction: 'fail', agent: { command: agentCommand('agent-fail') } }], {
          defaults: { retry: { maxAttempts: 1 } },
        }),
      );
      expectExit(await runBaton(['run', plan, '--detach', '--id', 'r1'], { home }), 0);
      await runBaton(['check'], { home });
      expect(stepOf(await runStatus(home, 'r1'), 'a').status).toBe('blocked');

      const big = join(dir, 'result.json');
      writeFileSync(big, fiftyMegabytesOfJson());
      const tooBig = expectExit(await runBaton(['resolve', 'r1', 'a', '--result', big], { home }), 2);
      expect(tooBig.stderr).toContain(`--result ${big}: 52428800 bytes`);
      expect(tooBig.stderr).toMatch(LIMIT);
      const zero = expectExit(await runBaton(['resolve', 'r1', 'a', '--result', '/dev/zero'], { home }), 2);
      expect(zero.stderr).toContain('/dev/zero is not a regular file');
      const run = await runStatus(home, 'r1');
      expect(stepOf(run, 'a').status).toBe('blocked');
      expect((await timeline(home, 'r1')).map((e) => e.type)).not.toContain('step.resolved');
    },
    TEST_TIMEOUT,
  );
});

describe('the console: bodies past its caps answer 413, bodies that are not UTF-8 are refused', () => {
  it('a capability URL answers 2 MB with 413 and refuses Latin-1 with 400; a form past 256 KiB is 413', async () => {
    const home = join(tempDir('baton-payload-console-'), 'home');
    const store = SqliteStore.open(join(home, 'baton.db'));
    const console = await startTestConsole(store, home);
    try {
      const plan = validatePlanObject(
        { name: 'gated', steps: [{ id: 'deployed', wait: { for: 'event', event: 'deploy-done' } }] },
        'gated',
      );
      await store.createRun({ id: 'r1', plan, planHash: 'h', inputs: {}, workspace: home, now: 1000 });
      await store.cycle({
        owner: 'w',
        now: 1000,
        leaseMs: 60_000,
        completions: [],
        claimLimit: 4,
        random: () => 0,
      });
      const inbox = await (await fetch(`${console.origin}/inbox`, { headers: withSession() })).text();
      const url = /<b>event<\/b> <code class="capability-url">([^<]+)<\/code>/.exec(inbox)![1]!;
      const post = (body: string | Buffer) =>
        fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

      const huge = await post('x'.repeat(2 * 1024 * 1024));
      expect(huge.status).toBe(413);
      expect((await huge.json()).error).toContain('larger than 65536 bytes');
      const latin1 = await post(Buffer.from([0x7b, 0x22, 0x76, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d])); // {"v":"é"} in Latin-1
      expect(latin1.status).toBe(400);
      expect(await latin1.text()).toContain('not valid UTF-8');
      const step = async () => (await store.getRun('r1'))!.steps[0]!;
      expect((await step()).status).toBe('waiting');

      const csrf = await csrfOf(console.origin, '/runs/r1/steps/deployed');
      const form = (body: string) =>
        fetch(`${console.origin}/runs/r1/steps/deployed/send`, {
          method: 'POST',
          redirect: 'manual',
          headers: withSession({ 'content-type': 'application/x-www-form-urlencoded' }),
          body,
        });
      const bigForm = await form(
        new URLSearchParams({ csrf, payload: `"${'y'.repeat(300 * 1024)}"` }).toString(),
      );
      expect(bigForm.status).toBe(413);
      expect(await bigForm.text()).toContain('the limit of a console action');
      // %E9 alone is Latin-1's é: URLSearchParams would make it U+FFFD.
      const badForm = await form(`csrf=${encodeURIComponent(csrf)}&payload=%22caf%E9%22`);
      expect(badForm.status).toBe(400);
      expect(await badForm.text()).toContain('not valid UTF-8');
      expect((await step()).status).toBe('waiting');
      expect((await store.getEvents('r1')).map((e) => e.type)).not.toContain('event.received');
    } finally {
      await console.close();
      await store.close();
    }
  });
});
