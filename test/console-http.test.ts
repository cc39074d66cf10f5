import { appendFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console/console-server.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { removeTempDirs, runBaton, spawnBaton, tempDir, waitFor } from './helpers/cli.js';
import { csrfOf, seedBlockedRun, startTestConsole, TEST_TOKEN, withSession } from './helpers/console.js';
import { freshSchemaName, usePostgres } from './helpers/postgres.js';

const SECRET = 'console-secret-value-4242';

/** Every page and stream of the console, for a run `r1` with steps a and b. */
const GETS = [
  '/',
  '/inbox',
  '/workers',
  '/live',
  '/runs/r1',
  '/runs/r1/timeline.json',
  '/runs/r1/steps/a',
  '/runs/r1/steps/a/attempts/1/log',
  '/runs/r1/steps/a/attempts/1/log/live',
  '/runs/r1/steps/a/artifact?attempt=1&path=out.txt',
  '/assets/console.js',
];
const POSTS = [
  '/runs/r1/steps/b/retry',
  '/runs/r1/steps/b/skip',
  '/runs/r1/steps/b/resolve',
  '/runs/r1/cancel',
  '/runs/r1/resume',
  '/runs/r1/approve',
  '/runs/r1/reject',
];

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: withSession({ 'content-type': 'application/x-www-form-urlencoded' }),
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual' as const,
});

function describeConsoleHttp(
  kind: string,
  openStore: () => Promise<{ store: Store; cleanup(): Promise<void> }>,
) {
  describe(`console over HTTP: ${kind}`, () => {
    let dir: string;
    let store: Store;
    let cleanup: () => Promise<void>;
    let console: RunningConsole;
    let origin: string;

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'baton-console-http-'));
      ({ store, cleanup } = await openStore());
      await seedBlockedRun(store, join(dir, 'home'), join(dir, 'ws'), `permission denied for ${SECRET}`);
      console = await startTestConsole(store, join(dir, 'home'), { CONSOLE_TEST_TOKEN: SECRET });
      origin = console.origin;
    });
    afterEach(async () => {
      await console.close();
      await store.close();
      await cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    it('refuses every page, stream and action without the session token (401), and a wrong one', async () => {
      for (const path of GETS) {
        expect((await fetch(`${origin}${path}`)).status, path).toBe(401);
        const wrong = await fetch(`${origin}${path}`, { headers: { cookie: 'baton_session=guess' } });
        expect(wrong.status, path).toBe(401);
      }
      for (const path of POSTS) {
        const response = await fetch(`${origin}${path}`, { ...form({}), headers: {} });
        expect(response.status, path).toBe(401);
      }
      expect((await fetch(`${origin}/?token=guess`, { redirect: 'manual' })).status).toBe(401);
      // Nothing changed.
      expect((await store.getRun('r1'))?.steps.map((s) => s.status)).toEqual(['succeeded', 'blocked']);
    });

    it('takes the token from the printed address into an HttpOnly SameSite=Strict cookie, and serves with security headers', async () => {
      const opened = await fetch(`${origin}/runs/r1?token=${TEST_TOKEN}`, { redirect: 'manual' });
      expect(opened.status).toBe(303);
      expect(opened.headers.get('location')).toBe('/runs/r1');
      const cookie = opened.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(/^baton_session=[^;]+; HttpOnly; SameSite=Strict; Path=\//);
      const page = await fetch(`${origin}/runs/r1`, { headers: { cookie: cookie.split(';')[0]! } });
      expect(page.status).toBe(200);
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      const text = await page.text();
      // No inline script or style for the CSP to allow: only the console's own files.
      expect(text).not.toMatch(/<script(?![^>]*\ssrc=)/);
      expect(text).not.toMatch(/\sstyle=/);
      // A bearer header works too (scripts, curl), and secrets are masked as everywhere else.
      const step = await fetch(`${origin}/runs/r1/steps/b`, {
        headers: { authorization: `Bearer ${TEST_TOKEN}` },
      });
      const body = await step.text();
      expect(body).toContain('permission denied for [redacted]');
      expect(body).not.toContain(SECRET);
    });

    it('refuses actions without the CSRF token, with a wrong one, or from another origin (403), then acts with it', async () => {
      const csrf = await csrfOf(origin, '/runs/r1');
      expect((await fetch(`${origin}/runs/r1/steps/b/retry`, form({}))).status).toBe(403);
      expect((await fetch(`${origin}/runs/r1/steps/b/retry`, form({ csrf: `${csrf}x` }))).status).toBe(403);
      expect((await fetch(`${origin}/runs/r1/steps/b/retry`, form({ csrf: TEST_TOKEN }))).status).toBe(403);
      const foreign = form({ csrf });
      foreign.headers = { ...foreign.headers, origin: 'http://evil.example' };
      expect((await fetch(`${origin}/runs/r1/steps/b/retry`, foreign)).status).toBe(403);
      // Another port of this machine is the same site, not this console.
      const sameSite = form({ csrf });
      sameSite.headers = { ...sameSite.headers, 'sec-fetch-site': 'same-site' };
      expect((await fetch(`${origin}/runs/r1/steps/b/retry`, sameSite)).status).toBe(403);
      expect((await store.getRun('r1'))?.steps[1]?.status).toBe('blocked');

      const done = await fetch(`${origin}/runs/r1/steps/b/retry`, form({ csrf, back: 'inbox' }));
      expect(done.status).toBe(303);
      expect(done.headers.get('location')).toBe('/inbox');
      expect((await store.getRun('r1'))?.steps[1]?.status).toBe('ready');
      // An impossible change is refused with the store's message (409), nothing changed.
      const again = await fetch(`${origin}/runs/r1/steps/a/retry`, form({ csrf }));
      expect(again.status).toBe(409);
      expect(await again.text()).toContain('only a blocked or retry_wait step can be retried');
    });

    it('serves a recorded artifact as a download and refuses paths that leave the workspace', async () => {
      const get = (query: string) =>
        fetch(`${origin}/runs/r1/steps/a/artifact?attempt=1&${query}`, { headers: withSession() });
      const ok = await get('path=out.txt');
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-disposition')).toMatch(/^attachment;/);
      expect(await ok.text()).toBe('artifact content\n');
      writeFileSync(join(dir, 'outside.txt'), 'not yours');
      for (const path of [
        '../outside.txt',
        '../../../../etc/passwd',
        '/etc/passwd',
        'sub/../../outside.txt',
      ]) {
        const refused = await get(`path=${encodeURIComponent(path)}`);
        expect(refused.status, path).toBe(403);
        expect(await refused.text()).toMatch(/escapes the workspace|is an absolute path/);
      }
      // A symlink in the workspace that points out of it is refused too, recorded or not.
      symlinkSync(join(dir, 'outside.txt'), join(dir, 'ws', 'link.txt'));
      const linked = await get('path=link.txt');
      expect(linked.status).toBe(403);
      expect(await linked.text()).toContain('outside the workspace');
      // A file in the workspace that the attempt did not record is not served.
      writeFileSync(join(dir, 'ws', 'other.txt'), 'x');
      expect((await get('path=other.txt')).status).toBe(404);
    });

    it("streams the running attempt's log as it grows, masked, and ends the stream when the attempt ends", async () => {
      const plan = validatePlanObject({ name: 'live', steps: [{ id: 's', fn: 'noop' }] }, 'live');
      await store.createRun({
        id: 'live',
        plan,
        planHash: 'h',
        inputs: {},
        workspace: join(dir, 'ws'),
        now: Date.now(),
      });
      const cycle = (completions: Parameters<Store['cycle']>[0]['completions']) =>
        store.cycle({
          owner: 'w9',
          now: Date.now(),
          leaseMs: 60_000,
          completions,
          claimLimit: 1,
          random: () => 0,
        });
      const [claim] = (await cycle([])).claimed;
      const log = join(dir, 'home', 'runs', 'live', 's', 'attempt-1.log');
      mkdirSync(join(log, '..'), { recursive: true });
      writeFileSync(log, 'first line\n');
      const response = await fetch(`${origin}/runs/live/steps/s/attempts/1/log/live`, {
        headers: withSession(),
      });
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const reader = response.body!.getReader();
      let received = '';
      const readUntil = async (done: (text: string) => boolean) => {
        while (!done(received)) {
          const chunk = await reader.read();
          if (chunk.done) break;
          received += new TextDecoder().decode(chunk.value);
        }
        return received;
      };
      expect(await readUntil((t) => t.includes('first line'))).toContain('data: "first line\\n"');
      appendFileSync(log, `second line with ${SECRET}\n`);
      expect(await readUntil((t) => t.includes('second line'))).toContain('second line with [redacted]');
      await cycle([
        {
          ...claim!,
          owner: 'w9',
          outcome: { ok: true, summary: 'done', outputs: [] },
          startedAt: Date.now() - 1,
          endedAt: Date.now(),
          logPath: 'runs/live/s/attempt-1.log',
        },
      ]);
      expect(await readUntil((t) => t.includes('event: end'))).toContain('event: end');
      expect(received).not.toContain(SECRET);
    });

    it("a running agent step's page says when it last printed, from its attempt log", async () => {
      const plan = validatePlanObject(
        {
          name: 'quiet',
          defaults: { agent: { command: [process.execPath] } },
          steps: [{ id: 's', instruction: 'think' }],
        },
        'quiet',
      );
      await store.createRun({
        id: 'quiet',
        plan,
        planHash: 'h',
        inputs: {},
        workspace: join(dir, 'ws'),
        now: Date.now(),
      });
      const cycle = await store.cycle({
        owner: 'w8',
        now: Date.now(),
        leaseMs: 60_000,
        completions: [],
        claimLimit: 1,
        random: () => 0,
      });
      expect(cycle.claimed).toHaveLength(1);
      const pageText = async () =>
        (await fetch(`${origin}/runs/quiet/steps/s`, { headers: withSession() })).text();
      // No output yet: nothing to say.
      expect(await pageText()).not.toContain('Last output');
      const log = join(dir, 'home', 'runs', 'quiet', 's', 'attempt-1.log');
      mkdirSync(join(log, '..'), { recursive: true });
      writeFileSync(log, 'thinking\n');
      expect(await pageText()).toMatch(/<dt>Last output<\/dt><dd id="last-output">\d+[smh] ago<\/dd>/);
    });

    it('refuses a request whose Host is not this loopback console (DNS rebinding)', async () => {
      const { request } = await import('node:http');
      const status = await new Promise<number>((resolve, reject) => {
        const url = new URL(origin);
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: '/',
            headers: { ...withSession(), host: 'evil.example' },
          },
          (res) => resolve(res.statusCode ?? 0),
        );
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(403);
    });
  });
}

describeConsoleHttp('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-console-db-'));
  return {
    store: SqliteStore.open(join(dir, 'baton.db')),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe('console over HTTP: postgres', () => {
  const pgc = usePostgres();
  describeConsoleHttp('postgres', async () => {
    const schema = freshSchemaName('console');
    return {
      store: await PostgresStore.open(pgc.server.url, { schema }),
      cleanup: async () => {
        await pgc.admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      },
    };
  });
});

describe('baton serve', () => {
  afterAll(removeTempDirs);

  it('refuses to listen beyond loopback without a token file (exit 2), and serves with one', async () => {
    const home = tempDir('baton-serve-');
    expect((await runBaton(['flow', 'set', 'k', '--concurrency', '1'], { home })).code).toBe(0);
    const refused = await runBaton(['serve', '--host', '0.0.0.0'], { home });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      '--host 0.0.0.0: listening beyond this machine needs a session token you chose',
    );
    const tokenFile = join(home, 'token');
    writeFileSync(tokenFile, 'x'.repeat(8), { mode: 0o600 });
    const short = await runBaton(['serve', '--host', '0.0.0.0', '--token-file', tokenFile], { home });
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('at least 16 characters');

    writeFileSync(tokenFile, `${'t'.repeat(32)}\n`, { mode: 0o600 });
    const serving = spawnBaton(['serve', '--host', '0.0.0.0', '--token-file', tokenFile], { home });
    const port = await waitFor(() => /:(\d+)\//.exec(serving.stdout())?.[1], 20_000, 'the address');
    expect(serving.stdout()).not.toContain('t'.repeat(32));
    const page = await fetch(`http://127.0.0.1:${port}/`, {
      headers: { authorization: `Bearer ${'t'.repeat(32)}` },
    });
    expect(page.status).toBe(200);
    serving.child.kill('SIGTERM');
    expect((await serving.exited).code).toBe(0);
  });

  it('prints the address with a fresh token once; opening it signs the browser in', async () => {
    const home = tempDir('baton-serve-');
    expect((await runBaton(['flow', 'set', 'k', '--concurrency', '1'], { home })).code).toBe(0);
    const serving = spawnBaton(['serve'], { home });
    const address = await waitFor(
      () => /http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/.exec(serving.stdout())?.[0],
      20_000,
      'the address',
    );
    expect((await fetch(address.replace(/\?token=.*/, ''))).status).toBe(401);
    const opened = await fetch(address, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('set-cookie')).toContain('HttpOnly; SameSite=Strict');
    serving.child.kill('SIGINT');
    expect((await serving.exited).code).toBe(0);
  });
});
