/**
 * Everything the console answers passes the masking boundary: secrets of every kind (a variable
 * named like a secret, one BATON_SECRET_ENV lists, a hook's `urlEnv`, a model's `apiKeyEnv`, the
 * store URL's password), planted raw into everything a store holds (inputs, plan text, a model's
 * name, results, failure messages, a wait's prompt, an event's payload, a schedule, an attempt's
 * log), are read back through every page and stream of the console (enumerated from PAGE_ROUTES,
 * so a new one is covered without editing this test), its `/metrics`, and the pages of the
 * capability URLs it shows: none may appear.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningConsole, startConsole } from '../src/console/console-server.js';
import { PAGE_ROUTES } from '../src/console/page-routes.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { blockedUrls, blockSeqOf } from '../src/engine/blocked-urls.js';
import { waitUrlKey } from '../src/engine/wait-urls.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { TEST_TOKEN, withSession } from './helpers/console.js';

const SECRETS = {
  /** A variable whose name says secret. */
  named: 'envtoken-5a1f9c3e',
  /** A variable BATON_SECRET_ENV lists. */
  listed: 'listedvalue-77b2d0',
  /** The variable a hook's `urlEnv` names. */
  hookUrl: 'https://hooks.example/hooksecret-e41c',
  /** The variable a model step's `apiKeyEnv` names. */
  apiKey: 'modelkey-90af3b7d',
  /** The store URL's password (given to the console as a secret value). */
  storePassword: 'pgpass-3c8e51aa',
};
const ENV = {
  ACME_API_TOKEN: SECRETS.named,
  BATON_SECRET_ENV: 'DEPLOY_PASSPHRASE',
  DEPLOY_PASSPHRASE: SECRETS.listed,
  TEAM_HOOK: SECRETS.hookUrl,
  LLM_ACCESS: SECRETS.apiKey,
};
const ALL = Object.values(SECRETS).join(' ');

type Completions = Parameters<Store['cycle']>[0]['completions'];

/** A run `r1` (every step's text carrying every secret), a proposal `p1` and a schedule. */
async function seed(store: Store, home: string, workspace: string): Promise<void> {
  const plan = validatePlanObject(
    {
      name: 'leaky',
      description: `watch ${ALL}`,
      defaults: { retry: { maxAttempts: 1 } },
      hooks: [{ on: ['failed'], urlEnv: 'TEAM_HOOK' }],
      inputs: { topic: { default: 'x' } },
      steps: [
        { id: 'a', title: `fetch ${ALL}`, fn: 'noop' },
        { id: 'b', title: `use ${ALL}`, fn: 'noop', dependsOn: ['a'] },
        {
          id: 'm',
          model: {
            provider: 'openai',
            model: `gpt-${SECRETS.named}`,
            apiKeyEnv: 'LLM_ACCESS',
            prompt: `summarise ${ALL}`,
          },
        },
        { id: 'gate', wait: { for: 'approval', prompt: `Ship ${ALL}?` } },
        { id: 'news', wait: { for: 'event', event: 'released' }, dependsOn: ['gate'] },
      ],
    },
    'leaky',
  );
  mkdirSync(workspace, { recursive: true });
  const content = 'artifact content\n';
  writeFileSync(join(workspace, 'out.txt'), content);
  const logPath = 'runs/r1/a/attempt-1.log';
  mkdirSync(join(home, 'runs/r1/a'), { recursive: true });
  writeFileSync(join(home, logPath), `the agent said ${ALL}\n`);
  const run = { plan, planHash: 'h', inputs: { topic: ALL }, workspace, now: 1000 };
  await store.createRun({ ...run, id: 'r1' });
  await store.createRun({ ...run, id: 'p1', awaitingApproval: true });
  const sha256 = createHash('sha256').update(content).digest('hex');
  const ended = (stepId: string): Completions[number]['outcome'] =>
    stepId === 'a'
      ? { ok: true, summary: `a done ${ALL}`, outputs: [{ path: 'out.txt', size: content.length, sha256 }] }
      : stepId === 'm'
        ? {
            ok: true,
            summary: `m said ${ALL}`,
            outputs: [],
            usage: { inputTokens: 7, outputTokens: 3, costUsd: 0.5 },
          }
        : { ok: false, failureClass: 'fatal', message: `permission denied ${ALL}` };
  let completions: Completions = [];
  for (let now = 1000; ; now += 100) {
    const { claimed } = await store.cycle({
      owner: 'w1',
      now,
      leaseMs: 60_000,
      completions,
      claimLimit: 5,
      random: () => 0,
    });
    if (claimed.length === 0 && completions.length === 0) break;
    completions = claimed.map((step) => ({
      ...step,
      owner: 'w1',
      outcome: ended(step.stepId),
      startedAt: now,
      endedAt: now + 50,
      logPath: step.stepId === 'a' ? logPath : null,
    }));
  }
  await store.approveStep('r1', 'gate', { by: `ops ${ALL}`, comment: `fine ${ALL}` }, 2000);
  await store.cycle({
    owner: 'w1',
    now: 2100,
    leaseMs: 60_000,
    completions: [],
    claimLimit: 5,
    random: () => 0,
  });
  await store.addSchedule({
    name: 'nightly',
    ...run,
    rules: {
      timing: { cron: '0 8 * * *', tz: 'UTC' },
      overlap: 'skip',
      catchUpMs: 0,
      startAt: null,
      endAt: null,
    },
  });
}

/** The value of each `*` of a route, for every pattern of PAGE_ROUTES. */
function pathsOf(pattern: string): string[] {
  if (pattern === '') return ['/'];
  const parts = pattern.split('/');
  let paths = [''];
  for (const [i, part] of parts.entries()) {
    const values =
      part !== '*'
        ? [part]
        : parts[i - 1] === 'runs'
          ? ['r1', 'p1']
          : parts[i - 1] === 'steps'
            ? ['a', 'b', 'm', 'gate', 'news']
            : ['1'];
    paths = paths.flatMap((path) => values.map((value) => `${path}/${value}`));
  }
  return paths.map((path) => (path.endsWith('/artifact') ? `${path}?attempt=1&path=out.txt` : path));
}

describe('console: every answer masked', () => {
  let dir: string;
  let store: SqliteStore;
  let console: RunningConsole;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-console-masking-'));
    store = SqliteStore.open(join(dir, 'baton.db'));
    console = await startConsole({
      store,
      home: join(dir, 'home'),
      host: '127.0.0.1',
      port: 0,
      token: TEST_TOKEN,
      env: ENV,
      secretValues: [SECRETS.storePassword],
      pollMs: 50,
      logPollMs: 50,
      metrics: { scrapeToken: null },
    });
  });
  afterEach(async () => {
    await console.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('no page, stream, metric or capability page shows a secret of any kind', async () => {
    const get = (path: string, init: RequestInit = {}) =>
      fetch(`${console.origin}${path}`, { headers: withSession(), ...init });
    // Counters start at the first scrape: the attempts end after it.
    expect((await get('/metrics')).status).toBe(200);
    await seed(store, join(dir, 'home'), join(dir, 'ws'));
    const answers = new Map<string, string>();
    for (const [pattern] of PAGE_ROUTES) {
      for (const path of pathsOf(pattern)) {
        if (pattern === 'live' || pattern === 'api/runs/*/events') continue;
        const answer = await get(path);
        answers.set(`${path} (${answer.status})`, await answer.text());
      }
    }
    // The stream of every run's events, read until a new event's notice comes.
    const stream = new AbortController();
    const live = await get('/live?after=0', { signal: stream.signal });
    const reader = live.body!.getReader();
    await store.cancelRun('p1', 3000);
    let notices = '';
    while (!notices.includes('"runId":"p1"'))
      notices += new TextDecoder().decode((await reader.read()).value);
    stream.abort();
    answers.set('/live', notices);
    // Each run's stream of events, read from its first event until its newest stored one came.
    for (const runId of ['r1', 'p1']) {
      const last = (await store.getEvents(runId)).at(-1)!.seq;
      const events = new AbortController();
      const answer = await get(`/api/runs/${runId}/events?after=0`, { signal: events.signal });
      const frames = answer.body!.getReader();
      let text = '';
      while (!text.includes(`id: ${last}\n`)) text += new TextDecoder().decode((await frames.read()).value);
      events.abort();
      answers.set(`/api/runs/${runId}/events`, text);
    }
    const metrics = await (await get('/metrics')).text();
    expect(metrics).toContain('baton_tokens_total{model="openai/gpt-[redacted]",direction="input"} 7');
    answers.set('/metrics', metrics);
    const inbox = answers.get('/inbox (200)') ?? '';
    const urls = [...inbox.matchAll(/<code class="capability-url">([^<]+)<\/code>/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) answers.set(url, await (await fetch(url)).text());
    // A blocked step's URL, as a hook carries it.
    const blockSeq = blockSeqOf(await store.getEvents('r1'), 'b')!;
    const blocked = blockedUrls(console.origin, waitUrlKey(join(dir, 'home')), {
      runId: 'r1',
      stepId: 'b',
      blockSeq,
    });
    answers.set(blocked.retry, await (await fetch(blocked.retry)).text());
    // An event's payload sent through the console is stored masked: its step's page shows it so.
    const event = urls.find((url) => url.endsWith('/event'))!;
    const sent = await fetch(event, { method: 'POST', body: JSON.stringify({ note: ALL }) });
    answers.set(`POST ${event}`, await sent.text());
    expect(sent.status).toBe(200);
    const news = await (await get('/runs/r1/steps/news')).text();
    expect(news).toContain('note');
    answers.set('/runs/r1/steps/news (after the event)', news);
    // The pages did show what was planted, masked.
    expect(answers.get('/runs/r1/steps/b (200)')).toContain('permission denied [redacted]');
    expect(answers.get('/runs/r1/steps/a/attempts/1/log (200)')).toContain('the agent said [redacted]');
    for (const [where, text] of answers)
      for (const [kind, secret] of Object.entries(SECRETS))
        expect(text.includes(secret), `${where} shows the ${kind} secret`).toBe(false);
  });
});
