/** Helpers of the console tests: a console started in this process over a real store. */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RunningConsole, startConsole } from '../../src/console/console-server.js';
import { validatePlanObject } from '../../src/core/plan/parse.js';
import type { Store } from '../../src/store/store.js';
import { TRUSTED_FIXTURES } from './trusted-fixtures.js';

export const TEST_TOKEN = 'console-test-token-0123456789abcdef';

/**
 * A console over `store` whose environment is `env` and the fixture agents' trust (what a fork from
 * the console checks its agents against), as `baton serve` would have it.
 */
export function startTestConsole(
  store: Store,
  home: string,
  env: NodeJS.ProcessEnv = {},
): Promise<RunningConsole> {
  return startConsole({
    store,
    home,
    host: '127.0.0.1',
    port: 0,
    token: TEST_TOKEN,
    env: { BATON_TRUSTED_AGENTS: TRUSTED_FIXTURES, ...env },
    pollMs: 50,
    logPollMs: 50,
  });
}

/** Headers that carry the session (as a browser would, after opening the printed address). */
export const withSession = (headers: Record<string, string> = {}) => ({
  ...headers,
  cookie: `baton_session=${TEST_TOKEN}`,
});

/** The CSRF token of the session: read from a page's form, as a browser would send it back. */
export async function csrfOf(origin: string, path: string): Promise<string> {
  const page = await (await fetch(`${origin}${path}`, { headers: withSession() })).text();
  const token = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (!token) throw new Error(`no CSRF token on ${path}`);
  return token;
}

/**
 * A run `r1` whose step `a` succeeded with the artifact `out.txt` (its file written in
 * `workspace`) and an attempt log, and whose step `b` is blocked (fatal, `message`).
 */
export async function seedBlockedRun(
  store: Store,
  home: string,
  workspace: string,
  message = 'permission denied',
): Promise<void> {
  const plan = validatePlanObject(
    {
      name: 'seeded',
      defaults: { retry: { maxAttempts: 1 } },
      steps: [
        { id: 'a', fn: 'noop' },
        { id: 'b', fn: 'noop', dependsOn: ['a'] },
      ],
    },
    'seed',
  );
  mkdirSync(workspace, { recursive: true });
  const content = 'artifact content\n';
  writeFileSync(join(workspace, 'out.txt'), content);
  const logPath = 'runs/r1/a/attempt-1.log';
  mkdirSync(join(home, 'runs/r1/a'), { recursive: true });
  writeFileSync(join(home, logPath), 'line one of the log\n');
  await store.createRun({ id: 'r1', plan, planHash: 'h', inputs: { topic: 'x' }, workspace, now: 1000 });
  const cycle = (now: number, completions: Parameters<Store['cycle']>[0]['completions']) =>
    store.cycle({ owner: 'w1', now, leaseMs: 60_000, completions, claimLimit: 1, random: () => 0 });
  const first = await cycle(1000, []);
  const sha256 = createHash('sha256').update(content).digest('hex');
  const second = await cycle(1100, [
    {
      ...first.claimed[0]!,
      owner: 'w1',
      outcome: { ok: true, summary: 'a done', outputs: [{ path: 'out.txt', size: content.length, sha256 }] },
      startedAt: 1000,
      endedAt: 1100,
      logPath,
    },
  ]);
  await cycle(1200, [
    {
      ...second.claimed[0]!,
      owner: 'w1',
      outcome: { ok: false, failureClass: 'fatal', message },
      startedAt: 1100,
      endedAt: 1200,
      logPath: null,
    },
  ]);
}
