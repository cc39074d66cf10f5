// The console (`baton serve`): the runs list over 10,000 runs on SQLite and on PostgreSQL, and a run
// with 1,000 attempts (its timeline data, the page weight, and the timeline drawn in Chromium).
// Each figure is the median of REQUESTS requests over loopback with keep-alive (an upper bound of
// the server time), beside its floor in the same run: the bare store query, and a request for a
// static file.
import { existsSync } from 'node:fs';
import { startConsole } from '../../dist/console/console-server.js';
import { validatePlanObject } from '../../dist/core/plan/parse.js';
import { PostgresStore } from '../../dist/store/postgres/postgres-store.js';
import { SqliteStore } from '../../dist/store/sqlite/sqlite-store.js';
import { startCluster } from '../../scripts/pg-cluster.mjs';
import { emit, median, now, tempHome } from '../lib.mjs';

const RUNS = Number(process.env.BENCH_CONSOLE_RUNS ?? 10_000);
const REQUESTS = Number(process.env.BENCH_CONSOLE_REQUESTS ?? 30);
const ATTEMPT_STEPS = 100;
const ATTEMPTS_PER_STEP = 10;
const TOKEN = 'bench-console-token-0123456789abcdef';
const CHROMIUM = '/usr/bin/chromium';
/** Failures differ in wording: the same fingerprint again and again would block a step early (no_progress). */
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];

const plans = ['ingest', 'report', 'deploy'].map((name) =>
  validatePlanObject(
    {
      name,
      steps: Array.from({ length: 5 }, (_, i) => ({
        id: `s${i + 1}`,
        fn: 'noop',
        ...(i > 0 ? { dependsOn: [`s${i}`] } : {}),
      })),
    },
    'bench',
  ),
);

async function seedRuns(store, concurrency) {
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= RUNS) return;
      const id = `run-${String(i).padStart(6, '0')}`;
      await store.createRun({
        id,
        plan: plans[i % 3],
        planHash: 'h',
        inputs: {},
        workspace: '/ws',
        now: 1_000_000 + i * 1000,
      });
      if (i % 7 === 0) await store.cancelRun(id, 2_000_000_000 + i);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Median ms of `fn` over REQUESTS calls (after two warm-ups). */
async function timed(fn) {
  await fn();
  await fn();
  const samples = [];
  for (let i = 0; i < REQUESTS; i++) {
    const start = now();
    await fn();
    samples.push(now() - start);
  }
  return median(samples);
}

async function get(origin, path) {
  const response = await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const body = await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${Buffer.from(body).toString()}`);
  return body.byteLength;
}

/** The runs list: first page, a deep page, a status filter, a plan filter, an id search. */
async function measureList(store, home) {
  const running = await startConsole({ store, home, host: '127.0.0.1', port: 0, token: TOKEN, env: {} });
  try {
    const o = running.origin;
    const deep = Math.floor(RUNS / 50 / 2);
    return {
      pageMs: await timed(() => get(o, '/')),
      deepPageMs: await timed(() => get(o, `/?page=${deep}`)),
      filteredPageMs: await timed(() => get(o, '/?status=cancelled&plan=report')),
      searchPageMs: await timed(() => get(o, '/?q=0042')),
      queryFloorMs: await timed(() => store.listRunPage({ limit: 50 })),
      httpFloorMs: await timed(() => get(o, '/assets/console.css')),
    };
  } finally {
    await running.close();
  }
}

/** One run of ATTEMPT_STEPS steps, each failing ATTEMPTS_PER_STEP - 1 times before it succeeds. */
async function seedAttempts(store) {
  const plan = validatePlanObject(
    {
      name: 'retries',
      limits: { concurrency: ATTEMPT_STEPS, maxSteps: ATTEMPT_STEPS * ATTEMPTS_PER_STEP * 2 },
      defaults: { retry: { maxAttempts: ATTEMPTS_PER_STEP, initialDelayMs: 1, maxDelayMs: 1 } },
      steps: Array.from({ length: ATTEMPT_STEPS }, (_, i) => ({ id: `step-${i + 1}`, fn: 'noop' })),
    },
    'bench',
  );
  let t = 5_000_000_000;
  await store.createRun({ id: 'big', plan, planHash: 'h', inputs: { topic: 'x' }, workspace: '/ws', now: t });
  let completions = [];
  let attempts = 0;
  for (let round = 0; round < ATTEMPTS_PER_STEP * 3; round++) {
    t += 10;
    const { claimed } = await store.cycle({
      runId: 'big',
      owner: 'w',
      now: t,
      leaseMs: 60_000,
      completions,
      claimLimit: ATTEMPT_STEPS,
      random: () => 0,
    });
    attempts += completions.length;
    if (claimed.length === 0 && completions.length === 0) break;
    completions = claimed.map((c) => ({
      ...c,
      owner: 'w',
      outcome:
        c.attempt < ATTEMPTS_PER_STEP
          ? {
              ok: false,
              failureClass: 'transient',
              message: `upstream ${WORDS[c.attempt % WORDS.length]} failed`,
            }
          : {
              ok: true,
              summary: 'done',
              outputs: [],
              usage: { inputTokens: 100, outputTokens: 20, costUsd: 0.001 },
            },
      startedAt: t,
      endedAt: t + 5,
      logPath: null,
    }));
    if (completions.length > 0) {
      const c = claimed[0];
      await store.appendEvents(
        'big',
        [
          {
            type: 'recovery.retried',
            stepId: c.stepId,
            callId: 'c',
            provider: 'openai',
            model: 'm',
            attempt: 1,
            reason: 'rate_limit',
            status: 429,
            waitMs: 5,
          },
        ],
        t,
      );
    }
    t += 20;
  }
  const count = (await store.getAttempts('big')).length;
  if (count !== ATTEMPT_STEPS * ATTEMPTS_PER_STEP)
    throw new Error(`expected ${ATTEMPT_STEPS * ATTEMPTS_PER_STEP} attempts, got ${count} (${attempts})`);
}

async function measureRunPage(store, home, { draw }) {
  const running = await startConsole({ store, home, host: '127.0.0.1', port: 0, token: TOKEN, env: {} });
  try {
    const o = running.origin;
    const result = {
      timelineMs: await timed(() => get(o, '/runs/big/timeline.json')),
      timelineFloorMs: await timed(() =>
        Promise.all([store.getAttempts('big'), store.getEvents('big'), store.getRun('big')]),
      ),
      runPageMs: await timed(() => get(o, '/runs/big')),
    };
    const parts = await Promise.all(
      ['/runs/big', '/runs/big/timeline.json', '/assets/console.js', '/assets/console.css'].map((p) =>
        get(o, p),
      ),
    );
    result.runPageKb = parts.reduce((a, b) => a + b, 0) / 1024;
    if (draw) Object.assign(result, await measureDraw(o));
    return result;
  } finally {
    await running.close();
  }
}

/** In Chromium: navigation start to the timeline drawn; and the same for a page without a timeline. */
async function measureDraw(origin) {
  if (!existsSync(CHROMIUM)) return {};
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox'] });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(`${origin}/?token=${TOKEN}`);
    const draws = [];
    const floors = [];
    for (let i = 0; i < 7; i++) {
      await page.goto(`${origin}/runs/big`);
      await page.waitForSelector('#timeline[data-drawn]');
      draws.push(await page.evaluate(() => performance.now()));
      if (
        (await page.getAttribute('#timeline', 'data-drawn')) !==
        String(ATTEMPT_STEPS * ATTEMPTS_PER_STEP + ATTEMPT_STEPS * (ATTEMPTS_PER_STEP - 1))
      )
        throw new Error(`drew ${await page.getAttribute('#timeline', 'data-drawn')} spans`);
      await page.goto(`${origin}/workers`);
      await page.waitForSelector('#leases');
      floors.push(await page.evaluate(() => performance.now()));
    }
    return { drawMs: median(draws.slice(2)), drawFloorMs: median(floors.slice(2)) };
  } finally {
    await browser.close();
  }
}

const sqliteHome = tempHome('console');
const cluster = await startCluster();
try {
  const seeding = SqliteStore.open(sqliteHome.dbPath, { synchronous: 'OFF' });
  await seedRuns(seeding, 1);
  await seedAttempts(seeding);
  await seeding.close();
  const sqlite = SqliteStore.open(sqliteHome.dbPath);
  const sqliteList = await measureList(sqlite, sqliteHome.dir);
  const runPage = await measureRunPage(sqlite, sqliteHome.dir, { draw: true });
  await sqlite.close();

  const pg = await PostgresStore.open(cluster.url, { schema: 'bench_console' });
  await seedRuns(pg, 8);
  await seedAttempts(pg);
  const pgList = await measureList(pg, sqliteHome.dir);
  const pgRunPage = await measureRunPage(pg, sqliteHome.dir, { draw: false });
  await pg.close();

  const prefixed = (prefix, values) =>
    Object.fromEntries(
      Object.entries(values).map(([k, v]) => [`${prefix}${k[0].toUpperCase()}${k.slice(1)}`, v]),
    );
  emit({
    ...prefixed('sqlite', sqliteList),
    ...prefixed('pg', pgList),
    ...runPage,
    ...prefixed('pg', pgRunPage),
    runs: RUNS,
  });
} finally {
  sqliteHome.dispose();
  await cluster.stop();
}
