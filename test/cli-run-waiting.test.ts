/**
 * `baton run` in the foreground, through the real binary, when its run waits for a person: it says
 * so at once with the exact approve/reject commands `baton check` prints (and the capability URLs
 * when BATON_PUBLIC_URL is set, which work), and its live view on a terminal shows every step's
 * status as the store has it: skipped, waiting, a finished fan-out (these all stayed `pending`).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console/console-server.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import {
  cliPath,
  expectExit,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { startTestConsole } from './helpers/console.js';
import { fixturePlan, planDir } from './helpers/plans.js';
import { TRUSTED_FIXTURES } from './helpers/trusted-fixtures.js';

const opened: { console: RunningConsole; store: SqliteStore }[] = [];
afterEach(async () => {
  await stopProcesses();
  for (const { console, store } of opened.splice(0)) {
    await console.close();
    await store.close();
  }
});
afterAll(() => removeTempDirs());

/** A run of five steps, a wait and an approval: generous on a loaded machine. */
const TEST_TIMEOUT = 120_000;

/** A report whose sending waits for a person, after a skipped fix and a fan-out of three. */
const plan = fixturePlan([
  { id: 'draft', instruction: 'write the report' },
  { id: 'fix', dependsOn: ['draft'], when: 'steps.draft.result == "broken"', instruction: 'fix it' },
  {
    id: 'check',
    dependsOn: ['draft'],
    forEach: { items: '["a", "b", "c"]', as: 'part', maxItems: 5 },
    instruction: 'check part {{part}}',
  },
  { id: 'approve-send', dependsOn: ['fix', 'check'], wait: { for: 'approval', prompt: 'Send the report?' } },
  { id: 'send', dependsOn: ['approve-send'], instruction: 'send it' },
]);

describe('baton run in the foreground, when its run waits for a person', () => {
  it(
    'prints a WAITING line with the commands and the capability URLs, which answer it',
    async () => {
      const { dir, home } = planDir('baton-run-waiting-');
      const file = writePlan(dir, plan);
      const run = spawnBaton(['run', file, '--id', 'r1'], {
        home,
        env: { BATON_PUBLIC_URL: 'https://baton.example.com' },
      });
      await waitFor(() => run.stdout().includes("reject r1 approve-send --comment '...'"), 60_000, 'WAITING');
      await waitFor(() => /\n {2}reject: \S+\n/.test(run.stdout()), 10_000, 'the URLs');
      const out = run.stdout();
      expect(out).toContain(
        [
          'WAITING run r1 (cli-test): approve-send waits for approval: Send the report?',
          "  baton approve r1 approve-send --comment '...'",
          "  baton reject r1 approve-send --comment '...'",
          '',
        ].join('\n'),
      );
      expect(out).toMatch(/\d fix: skipped: when steps\.draft\.result == "broken" was false\n/);
      const approve =
        /\n {2}approve: (https:\/\/baton\.example\.com\/wait\/r1\/approve-send\/\S+\/approve)\n/.exec(
          out,
        )?.[1];
      expect(approve).toBeDefined();
      expect(out).toMatch(
        /\n {2}reject: https:\/\/baton\.example\.com\/wait\/r1\/approve-send\/\S+\/reject\n/,
      );
      // The URL is the console's: POSTed there, it answers the wait, and the foreground run goes on.
      const store = SqliteStore.open(join(home, 'baton.db'));
      const console = await startTestConsole(store, home);
      opened.push({ console, store });
      const answer = await fetch(approve!.replace('https://baton.example.com', console.origin), {
        method: 'POST',
      });
      expect(answer.status).toBe(200);
      expect(await run.exited).toEqual({ code: 0, signal: null });
      expect(run.stdout()).toMatch(/run r1 succeeded \(8\/8 steps done/);
    },
    TEST_TIMEOUT,
  );

  it(
    'with --json, says it on stderr and keeps stdout the run as JSON',
    async () => {
      const { dir, home } = planDir('baton-run-waiting-json-');
      const file = writePlan(dir, plan);
      const run = spawnBaton(['run', file, '--id', 'r2', '--json'], { home });
      await waitFor(() => run.stderr().includes('WAITING run r2'), 60_000, 'WAITING');
      expectExit(await runBaton(['approve', 'r2', 'approve-send'], { home }), 0);
      expect(await run.exited).toEqual({ code: 0, signal: null });
      expect(JSON.parse(run.stdout())).toMatchObject({ id: 'r2', status: 'succeeded' });
    },
    TEST_TIMEOUT,
  );

  // A terminal for the live view: util-linux `script` gives the command a pseudo-terminal.
  const script = ['/usr/bin/script', '/bin/script'].find((file) => existsSync(file));
  it.skipIf(script === undefined)(
    'its live view on a terminal shows skipped, waiting and a finished fan-out as they are, and the WAITING lines under it',
    async () => {
      const { dir, home } = planDir('baton-run-live-');
      const file = writePlan(dir, plan);
      const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
      const command = [process.execPath, cliPath, '--home', home, 'run', file, '--id', 'r3']
        .map(quote)
        .join(' ');
      const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm' };
      env.BATON_TRUSTED_AGENTS = TRUSTED_FIXTURES;
      const child = spawn(script!, ['-qec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let screen = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        screen += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
      try {
        /** The last frame the live view drew (after its last move back up), without colours. */
        const frame = () =>
          (screen.split(/\x1b\[\d+A\r\x1b\[J/).at(-1) ?? '')
            .replaceAll(/\x1b\[[0-9;]*m/g, '')
            .replaceAll('\r', '');
        await waitFor(() => frame().includes('WAITING run r3'), 60_000, 'the WAITING lines in the live view');
        const waiting = frame();
        expect(waiting).toMatch(/↷ fix +skipped/);
        expect(waiting).toMatch(/✔ check +succeeded +3\/3 done, 0 running/);
        expect(waiting).toMatch(/⏸ approve-send +waiting/);
        expect(waiting).toMatch(/· send +pending/);
        expect(waiting).toContain("  baton approve r3 approve-send --comment '...'");
        expectExit(await runBaton(['approve', 'r3', 'approve-send'], { home }), 0);
        expect(await exited).toBe(0);
        const done = frame();
        expect(done).toMatch(/✔ approve-send +succeeded/);
        expect(done).toMatch(/✔ send +succeeded/);
        expect(done).not.toContain('WAITING');
        expect(done).toMatch(/run r3 succeeded \(8\/8 steps done/);
      } finally {
        child.kill('SIGKILL');
      }
    },
    TEST_TIMEOUT,
  );
});
