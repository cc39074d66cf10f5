/**
 * Webhook triggers through a real `baton serve` and real HTTP (curl for GitHub's deliveries): a
 * signed delivery stores exactly one run named by the trigger and the delivery; a redelivery answers
 * 200 with the same run and stores nothing; a wrong signature, a tampered body, an old Slack or
 * Stripe timestamp store nothing (401); a filtered delivery answers 204; a paused trigger 503; a body
 * over 1 MiB 413; 100 concurrent distinct deliveries make 100 runs; on PostgreSQL two servers given
 * the same delivery store one run. `trigger show` lists the deliveries, never the secret or the
 * signature.
 */
import { execFile } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  batonJson,
  expectExit,
  expectRefused,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir } from './helpers/plans.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

const SECRET = 'hook-secret-4f1c9a7e';
const env = { HOOK_SECRET: SECRET };

afterEach(async () => {
  await stopProcesses();
});
afterAll(() => removeTempDirs());

const hmacHex = (data: string) => createHmac('sha256', SECRET).update(data).digest('hex');

interface RunEntry {
  id: string;
  planName: string;
  status: string;
}

interface Shown {
  name: string;
  paused: boolean;
  deliveries: { outcome: string; deliveryId: string | null; runId: string | null; reason: string | null }[];
}

/** A plan with an input, a trigger of it (extra options), and a real `baton serve`. */
async function world(source: string, extra: string[] = [], store: string[] = []) {
  const { dir, home } = planDir(`baton-trigger-${source}-`);
  const plan = writePlan(
    dir,
    fixturePlan([{ id: 'triage', instruction: 'triage {{inputs.title}}' }], {
      name: 'triage',
      inputs: { title: null },
    }),
  );
  expectExit(
    await runBaton(
      [
        'trigger',
        'add',
        'hooked',
        plan,
        '--source',
        source,
        '--secret-env',
        'HOOK_SECRET',
        ...extra,
        ...store,
      ],
      { home },
    ),
    0,
  );
  const origin = await serve(home, store);
  const runs = async () =>
    (await batonJson<RunEntry[]>(['status', '--limit', '1000', ...store], { home })).filter(
      (run) => run.planName === 'triage',
    );
  return { dir, home, plan, origin, runs, url: `${origin}/hooks/hooked` };
}

async function serve(home: string, store: string[] = []): Promise<string> {
  const serving = spawnBaton(['serve', ...store], { home, env });
  return waitFor(
    () => /open (http:\/\/127\.0\.0\.1:\d+)\//.exec(serving.stdout())?.[1],
    30_000,
    'baton serve',
  );
}

async function post(url: string, body: string, headers: Record<string, string>) {
  const response = await fetch(url, { method: 'POST', body, headers });
  const text = await response.text();
  return {
    status: response.status,
    json: text === '' ? null : (JSON.parse(text) as Record<string, unknown>),
  };
}

const curlAvailable = await promisify(execFile)('curl', ['--version']).then(
  () => true,
  () => false,
);

/** A POST with curl: the status and the JSON answered. */
async function curl(url: string, body: string, headers: Record<string, string>) {
  const args = ['-s', '-X', 'POST', url, '--data-binary', body, '-w', '\n%{http_code}'];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  const { stdout } = await promisify(execFile)('curl', args);
  const lines = stdout.split('\n');
  const status = Number(lines.pop());
  const text = lines.join('\n').trim();
  return { status, json: text === '' ? null : (JSON.parse(text) as Record<string, unknown>) };
}

describe('webhook triggers', () => {
  it.skipIf(!curlAvailable && process.env.CI !== 'true')(
    'GitHub: a signed delivery with curl stores one run; the same delivery again answers 200 with it; a wrong signature or a tampered body stores nothing',
    async () => {
      const w = await world('github', [
        '--when',
        'event.type == "issues" && body.action == "opened"',
        '-i',
        'title={{body.issue.title}}',
        '-l',
        'source=github',
      ]);
      const body = JSON.stringify({ action: 'opened', issue: { title: 'Crash on start' } });
      const headers = {
        'Content-Type': 'application/json',
        'X-GitHub-Event': 'issues',
        'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        'X-Hub-Signature-256': `sha256=${hmacHex(body)}`,
      };
      const first = await curl(w.url, body, headers);
      expect(first).toEqual({ status: 202, json: { runId: 'hooked-72d3162e-cc78-11e3-81ab-4c9367dc0958' } });
      const again = await curl(w.url, body, headers);
      expect(again).toEqual({
        status: 200,
        json: { runId: 'hooked-72d3162e-cc78-11e3-81ab-4c9367dc0958', duplicate: true },
      });
      expect((await w.runs()).map((run) => run.id)).toEqual(['hooked-72d3162e-cc78-11e3-81ab-4c9367dc0958']);
      const run = await batonJson<{ inputs: Record<string, string>; labels: Record<string, string> }>(
        ['status', 'hooked-72d3162e-cc78-11e3-81ab-4c9367dc0958'],
        { home: w.home },
        [0, 1],
      );
      expect(run.inputs).toEqual({ title: 'Crash on start' });

      const other = { ...headers, 'X-GitHub-Delivery': 'second' };
      expect(
        (await curl(w.url, body, { ...other, 'X-Hub-Signature-256': `sha256=${hmacHex('x')}` })).status,
      ).toBe(401);
      const tampered = body.replace('Crash', 'Hack');
      expect((await curl(w.url, tampered, other)).status).toBe(401);
      expect((await curl(w.url, body, { ...other, 'X-Hub-Signature-256': '' })).status).toBe(401);
      // Filtered out by --when: 204, recorded, no run.
      const closed = JSON.stringify({ action: 'closed', issue: { title: 'x' } });
      const filtered = await curl(w.url, closed, {
        ...other,
        'X-GitHub-Delivery': 'third',
        'X-Hub-Signature-256': `sha256=${hmacHex(closed)}`,
      });
      expect(filtered.status).toBe(204);
      expect(await w.runs()).toHaveLength(1);

      // Paused: 503 and nothing stored; resumed, the delivery starts its run.
      expectExit(await runBaton(['trigger', 'pause', 'hooked'], { home: w.home }), 0);
      const fresh = { ...headers, 'X-GitHub-Delivery': 'fourth' };
      expect((await curl(w.url, body, fresh)).status).toBe(503);
      expect(await w.runs()).toHaveLength(1);
      expectExit(await runBaton(['trigger', 'resume', 'hooked'], { home: w.home }), 0);
      expect((await curl(w.url, body, fresh)).json).toEqual({ runId: 'hooked-fourth' });
      expect(await w.runs()).toHaveLength(2);

      const shown = await runBaton(['trigger', 'show', 'hooked', '--json'], { home: w.home });
      const parsed = JSON.parse(shown.stdout) as Shown;
      expect(parsed.deliveries.map((d) => d.outcome)).toEqual([
        'started',
        'refused',
        'filtered',
        'refused',
        'refused',
        'refused',
        'duplicate',
        'started',
      ]);
      expect(parsed.deliveries[1]!.reason).toMatch(/paused/);
      expect(parsed.deliveries[4]!.reason).toBe('X-Hub-Signature-256 does not match the body');
      // Never the secret, a signature, or the body.
      const text = `${shown.stdout}${(await runBaton(['trigger', 'show', 'hooked'], { home: w.home })).stdout}`;
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(hmacHex(body));
      expect(text).not.toContain('Hack');
    },
    120_000,
  );

  it('Slack: an old timestamp stores nothing; a signed slash command starts one run; the URL challenge is answered', async () => {
    const w = await world('slack', ['-i', 'title={{body.text}}']);
    const now = Math.floor(Date.now() / 1000);
    const form = 'command=%2Ftriage&text=login+fails&trigger_id=13345224609.738474920.8088930838d88f008e0';
    const signed = (timestamp: number, body: string) => ({
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Slack-Request-Timestamp': String(timestamp),
      'X-Slack-Signature': `v0=${hmacHex(`v0:${timestamp}:${body}`)}`,
    });
    const old = await post(w.url, form, signed(now - 6 * 60, form));
    expect(old.status).toBe(401);
    expect(old.json?.error).toMatch(/older than 5 minutes/);
    expect(await w.runs()).toHaveLength(0);
    const ok = await post(w.url, form, signed(now, form));
    // Slack's trigger id has dots, which a run id may not: the run is named by its hash.
    const hashed = createHash('sha256').update('13345224609.738474920.8088930838d88f008e0').digest('hex');
    expect(ok).toEqual({ status: 202, json: { runId: `hooked-h${hashed.slice(0, 32)}` } });
    const challenge = JSON.stringify({ type: 'url_verification', challenge: 'c-123' });
    expect(
      await post(w.url, challenge, { ...signed(now, challenge), 'Content-Type': 'application/json' }),
    ).toEqual({
      status: 200,
      json: { challenge: 'c-123' },
    });
    const runs = await w.runs();
    expect(runs).toHaveLength(1);
  }, 120_000);

  it('Stripe, HMAC and bearer: signed deliveries start runs named by the event id or header; a body over 1 MiB is 413; 100 concurrent deliveries make 100 runs', async () => {
    const w = await world('hmac', ['-i', 'title={{body.n}}', '--propose', '--priority', '7']);
    const sign = (body: string, id: string) => ({
      'Content-Type': 'application/json',
      'X-Baton-Delivery': id,
      'X-Baton-Signature-256': `sha256=${hmacHex(body)}`,
    });
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => {
        const body = JSON.stringify({ n: String(i) });
        return post(w.url, body, sign(body, `d${i}`));
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(202));
    const runs = await w.runs();
    expect(runs).toHaveLength(100);
    expect(new Set(runs.map((run) => run.id))).toEqual(new Set(answers.map((a) => a.json!.runId)));
    // --propose: each waits for a person; --priority: its runs claim before priority-0 work.
    expect(runs.every((run) => run.status === 'awaiting_approval')).toBe(true);
    const one = await batonJson<{ priority: number }>(['status', runs[0]!.id], { home: w.home }, [0, 1]);
    expect(one.priority).toBe(7);
    const big = JSON.stringify({ n: 'x'.repeat(1024 * 1024) });
    expect((await post(w.url, big, sign(big, 'big'))).status).toBe(413);
    expect(await w.runs()).toHaveLength(100);

    // Stripe: the event id names the run; a timestamp past the tolerance is refused.
    const s = await world('stripe', ['-i', 'title={{body.type}}']);
    const event = JSON.stringify({ id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy', type: 'charge.refunded' });
    const stripe = (t: number) => ({ 'Stripe-Signature': `t=${t},v1=${hmacHex(`${t}.${event}`)}` });
    const now = Math.floor(Date.now() / 1000);
    expect((await post(s.url, event, stripe(now - 600))).status).toBe(401);
    expect(await post(s.url, event, stripe(now))).toEqual({
      status: 202,
      json: { runId: 'hooked-evt_1NG8Du2eZvKYlo2CUI79vXWy' },
    });

    // Bearer: the token is the secret.
    const b = await world('bearer', ['-i', 'title=fixed']);
    expect((await post(b.url, '{}', { Authorization: 'Bearer wrong' })).status).toBe(401);
    const started = await post(b.url, '{"a":1}', {
      Authorization: `Bearer ${SECRET}`,
      'X-Baton-Delivery': 'b1',
    });
    expect(started).toEqual({ status: 202, json: { runId: 'hooked-b1' } });
    expect(await b.runs()).toHaveLength(1);
  }, 180_000);

  it('refuses a bad trigger with exit 2 and stores nothing', async () => {
    const { dir, home } = planDir('baton-trigger-bad-');
    const plan = writePlan(
      dir,
      fixturePlan([{ id: 'a', instruction: 'x {{inputs.title}}' }], { inputs: { title: null } }),
    );
    const add = (...args: string[]) =>
      runBaton(['trigger', 'add', 'bad', plan, '--secret-env', 'HOOK_SECRET', ...args], { home });
    expectRefused(
      await add('--source', 'gitlab', '-i', 'title=x'),
      /--source gitlab: expected one of github, slack, stripe, hmac, bearer/,
    );
    expectRefused(
      await add('--source', 'github', '-i', 'title=x', '--when', 'body.action =='),
      /--when .* does not parse/,
    );
    expectRefused(
      await add('--source', 'github', '-i', 'title={{inputs.title}}'),
      /-i title: \{\{inputs\.title\}\} is not a delivery reference/,
    );
    expectRefused(await add('--source', 'github'), /needs input|title/);
    expectRefused(
      await runBaton(
        ['trigger', 'add', 'bad', plan, '--source', 'github', '--secret-env', 'sk live 123', '-i', 'title=x'],
        { home },
      ),
      /--secret-env .*: give the NAME of the variable/,
    );
    expectRefused(await runBaton(['trigger', 'show', 'nothing'], { home }), /no trigger named "nothing"/);
    expect((await runBaton(['trigger', 'list'], { home })).stdout).toMatch(/no triggers yet/);
  }, 60_000);
});

describe('webhook triggers on PostgreSQL', () => {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('two serve processes given the same delivery at once store one run and answer the same id', async () => {
    const store = ['--store', `${server!.url}?schema=${freshSchemaName('trig')}`];
    const w = await world('github', ['-i', 'title={{body.issue.title}}'], store);
    const second = await serve(w.home, store);
    const body = JSON.stringify({ action: 'opened', issue: { title: 'Twice' } });
    for (let round = 0; round < 5; round += 1) {
      const headers = {
        'Content-Type': 'application/json',
        'X-GitHub-Delivery': `same-${round}`,
        'X-Hub-Signature-256': `sha256=${hmacHex(body)}`,
      };
      const [a, b] = await Promise.all([
        post(w.url, body, headers),
        post(`${second}/hooks/hooked`, body, headers),
      ]);
      expect([a.json?.runId, b.json?.runId]).toEqual([`hooked-same-${round}`, `hooked-same-${round}`]);
      expect([a.status, b.status].sort()).toEqual([200, 202]);
    }
    expect((await w.runs()).map((run) => run.id).sort()).toEqual(
      [0, 1, 2, 3, 4].map((r) => `hooked-same-${r}`),
    );
  }, 120_000);
});
