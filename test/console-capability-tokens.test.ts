/**
 * Capability URLs reveal nothing: a token is checked from the URL alone, before the store is read,
 * so a wrong token on a step that waits or is blocked, an unknown run and an unknown step do the
 * same work (no read at all) and get the same 404; only a token the key made leads to a lookup.
 * And the key is the file as it is now: replaced or deleted under a running `baton serve`, every URL
 * it made stops working at once and the URLs issued after it work, without a restart.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console/console-server.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { blockedUrls, blockSeqOf } from '../src/engine/blocked-urls.js';
import { waitUrlKey } from '../src/engine/wait-urls.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import {
  expectExit,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  tempDir,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { seedBlockedRun, startTestConsole, withSession } from './helpers/console.js';

const opened: { console?: RunningConsole; store?: SqliteStore }[] = [];
afterEach(async () => {
  await stopProcesses();
  for (const item of opened.splice(0)) {
    await item.console?.close();
    await item.store?.close();
  }
});
afterAll(() => removeTempDirs());

/** `store` with every call counted: what a request made the console read. */
function countingStore(store: Store): { store: Store; calls: string[] } {
  const calls: string[] = [];
  const counted = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: counted, calls };
}

/** The inbox's capability URLs, by step and action. */
async function inboxUrls(origin: string, headers: Record<string, string>): Promise<Map<string, string>> {
  const inbox = await (await fetch(`${origin}/inbox`, { headers })).text();
  const found = new Map<string, string>();
  for (const match of inbox.matchAll(/<code class="capability-url">([^<]+)<\/code>/g)) {
    const url = match[1]!;
    const [stepId, , action] = url.split('/').slice(-3);
    found.set(`${stepId}/${action}`, url);
  }
  return found;
}

const post = (url: string) => fetch(url, { method: 'POST' });

/** `url` with one character of its token's MAC changed: a token the key never made. */
function forged(url: string): string {
  const parts = url.split('/');
  const token = parts.at(-2)!;
  const at = 30;
  parts[parts.length - 2] = `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`;
  return parts.join('/');
}

describe('capability URLs: the token before any lookup', () => {
  it('a wrong token on a waiting or blocked step, an unknown run or step: the same 404, and nothing read', async () => {
    const home = join(tempDir('baton-cap-reads-'), 'home');
    const real = SqliteStore.open(join(home, 'baton.db'));
    await seedBlockedRun(real, home, join(home, 'ws'));
    const plan = validatePlanObject(
      { name: 'gated', steps: [{ id: 'gate', wait: { for: 'approval', prompt: 'Ship?' } }] },
      'gated',
    );
    await real.createRun({ id: 'w1', plan, planHash: 'h2', inputs: {}, workspace: home, now: 1000 });
    await real.cycle({
      owner: 'w1',
      now: 1000,
      leaseMs: 60_000,
      completions: [],
      claimLimit: 4,
      random: () => 0,
    });
    const { store, calls } = countingStore(real);
    const console = await startTestConsole(store, home);
    opened.push({ console, store: real });
    const approve = (await inboxUrls(console.origin, withSession())).get('gate/approve')!;
    expect(approve).toMatch(new RegExp(`^${console.origin}/wait/w1/gate/[A-Za-z0-9_-]{54}/approve$`));
    const blockSeq = blockSeqOf(await real.getEvents('r1'), 'b')!;
    const { retry } = blockedUrls(console.origin, waitUrlKey(home), { runId: 'r1', stepId: 'b', blockSeq });

    const token = (url: string) => url.split('/').at(-2)!;
    const refusals = {
      wait: [
        forged(approve),
        approve.replace('/gate/', '/nosuch/'),
        approve.replace('/w1/', '/nosuchrun/'),
        `${console.origin}/wait/w1/gate/${token(approve).slice(0, 43)}/approve`,
        approve.replace(/\/approve$/, '/reject'),
      ],
      blocked: [
        forged(retry),
        retry.replace('/b/', '/nosuch/'),
        retry.replace('/r1/', '/nosuchrun/'),
        `${console.origin}/blocked/r1/b/not-a-token/retry`,
        retry.replace(/\/retry$/, '/skip'),
      ],
    };
    for (const urls of Object.values(refusals)) {
      calls.length = 0;
      const answers = await Promise.all(
        urls.map(async (url) => {
          const answer = await post(url);
          return [answer.status, await answer.text()] as const;
        }),
      );
      const [first] = answers;
      for (const answer of answers) expect(answer).toEqual(first);
      expect(first![0]).toBe(404);
      // Checked from the URL alone: the store was never asked whether that run or step exists.
      expect(calls).toEqual([]);
    }

    calls.length = 0;
    expect((await post(approve)).status).toBe(200);
    expect(calls.length).toBeGreaterThan(0);
    expect((await post(retry)).status).toBe(200);
    // Used: the same token, known to the key, is refused by what the store says now.
    const again = await post(approve);
    expect(again.status).toBe(404);
    expect((await again.json()).error).toContain('no waiting step answers to this URL');
    expect((await real.getRun('w1'))!.steps[0]!.status).toBe('succeeded');
    expect((await real.getRun('r1'))!.steps.find((s) => s.stepId === 'b')!.status).not.toBe('blocked');
  });
});

describe('capability URLs: rotating wait-url.key under a running baton serve', () => {
  it('replaced or deleted, the key revokes every URL it made at once, and the URLs issued after it work', async () => {
    const dir = tempDir('baton-cap-rotate-');
    const home = join(dir, 'home');
    const gates = ['one', 'two', 'three'];
    const plan = writePlan(dir, {
      name: 'gated',
      steps: gates.map((id) => ({ id, wait: { for: 'approval', prompt: `Ship ${id}?` } })),
    });
    expectExit(await runBaton(['run', plan, '--detach', '--id', 'k1'], { home, cwd: dir }), 0);
    expectExit(await runBaton(['check'], { home, cwd: dir }), 0);
    const tokenFile = join(dir, 'session-token');
    writeFileSync(tokenFile, 'rotate-test-session-token-0123456789\n', { mode: 0o600 });
    const serving = spawnBaton(['serve', '--token-file', tokenFile], { home, cwd: dir });
    const origin = await waitFor(
      () => /open (http:\/\/127\.0\.0\.1:\d+)\//.exec(serving.stdout())?.[1],
      30_000,
      'the console address',
    );
    const session = { authorization: 'Bearer rotate-test-session-token-0123456789' };
    const urls = () => inboxUrls(origin, session);
    const unknownRun = async () => {
      const answer = await post(`${origin}/wait/nosuchrun/one/${'A'.repeat(54)}/approve`);
      return [answer.status, await answer.text()] as const;
    };
    const refusal = await unknownRun();
    expect(refusal[0]).toBe(404);
    const given = await urls();
    expect(given.size).toBe(gates.length * 2);
    // A URL works.
    expect((await post(given.get('one/approve')!)).status).toBe(200);

    // Replaced (as an operator would: a new file moved over the old one).
    const keyFile = join(home, 'wait-url.key');
    const old = readFileSync(keyFile);
    writeFileSync(`${keyFile}.new`, randomBytes(32), { mode: 0o600 });
    renameSync(`${keyFile}.new`, keyFile);
    const stale = await post(given.get('two/approve')!);
    expect([stale.status, await stale.text()]).toEqual(refusal);
    const reissued = await urls();
    expect(reissued.get('two/approve')).not.toBe(given.get('two/approve'));
    expect((await post(reissued.get('two/approve')!)).status).toBe(200);

    // Deleted: a new key is made at the next use, and the URLs of the one before stop working too.
    rmSync(keyFile);
    const stale3 = await post(reissued.get('three/reject')!);
    expect([stale3.status, await stale3.text()]).toEqual(refusal);
    const fresh = await urls();
    expect(readFileSync(keyFile).equals(old)).toBe(false);
    expect(statSync(keyFile).mode & 0o077).toBe(0);
    expect((await post(fresh.get('three/reject')!)).status).toBe(200);
    serving.child.kill('SIGTERM');
    expect((await serving.exited).code).toBe(0);

    const status = expectExit(await runBaton(['status', 'k1', '--json'], { home, cwd: dir }), 0);
    const steps = (JSON.parse(status.stdout) as { steps: { stepId: string; status: string }[] }).steps;
    expect(Object.fromEntries(steps.map((s) => [s.stepId, s.status]))).toEqual({
      one: 'succeeded',
      two: 'succeeded',
      three: 'skipped',
    });
  });
});
