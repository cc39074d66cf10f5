/**
 * `baton serve --metrics` end to end, on SQLite and on PostgreSQL: a real `baton serve` process
 * answers `/metrics` over HTTP on 127.0.0.1 for a bearer token only; a scripted workload runs
 * through the CLI (runs that succeed, retry, block with a failing hook, wait, are proposed, are
 * left due, and a step whose worker died and whose lease `check` reclaims); the exposition, read by
 * a strict parser of the text format, then says what the store's own reads say.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FAILURE_CLASSES } from '../src/core/failure.js';
import { RUN_STATUSES, STEP_STATUSES } from '../src/core/run-state.js';
import type { Store } from '../src/store/store.js';
import {
  agentCommand,
  expectExit,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import {
  METRICS_TOKEN,
  type MetricsTarget,
  metricsTokenFile,
  postgresMetricsTarget,
  scrapeMetrics,
  sqliteMetricsTarget,
} from './helpers/metrics-targets.js';
import { fixturePlan } from './helpers/plans.js';
import { usePostgres } from './helpers/postgres.js';
import { type Family, seriesValue } from './helpers/prometheus-text.js';

const TEST_TIMEOUT = 180_000;

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

const pg = usePostgres();

/** What `/metrics` should say, from the store's own reads (not metricsSnapshot). */
async function expectedOf(store: Store, now: number) {
  const runs = (await store.listRunPage({ limit: 1000 })).runs;
  const runCounts = Object.fromEntries(RUN_STATUSES.map((status) => [status, 0]));
  const steps = Object.fromEntries(STEP_STATUSES.map((status) => [status, 0]));
  const attempts = new Map<string, number>();
  let due = 0;
  let oldestDueAt = Number.POSITIVE_INFINITY;
  for (const summary of runs) {
    runCounts[summary.status]!++;
    const run = (await store.getRun(summary.id))!;
    if (['awaiting_approval', 'running', 'blocked'].includes(run.status))
      for (const step of run.steps) steps[step.status]!++;
    if (run.status === 'running')
      for (const step of run.steps)
        if (['ready', 'retry_wait'].includes(step.status) && step.dueAt !== null && step.dueAt <= now) {
          due++;
          oldestDueAt = Math.min(oldestDueAt, step.dueAt);
        }
    for (const attempt of await store.getAttempts(summary.id)) {
      if (attempt.outcome === 'discarded') continue;
      const key = attempt.outcome === 'succeeded' ? 'succeeded/' : `failed/${attempt.failureClass}`;
      attempts.set(key, (attempts.get(key) ?? 0) + 1);
    }
  }
  return { runCounts, steps, attempts, due, oldestDueAt };
}

/** The figures of a parsed exposition, in the shape of expectedOf's. */
function figuresOf(families: Map<string, Family>) {
  const runCounts = Object.fromEntries(
    RUN_STATUSES.map((status) => [status, seriesValue(families, 'baton_runs', { status })]),
  );
  const steps = Object.fromEntries(
    STEP_STATUSES.map((status) => [status, seriesValue(families, 'baton_steps', { status })]),
  );
  const attempts = new Map<string, number>();
  const succeeded = seriesValue(families, 'baton_attempts_total', { outcome: 'succeeded', class: '' });
  if (succeeded > 0) attempts.set('succeeded/', succeeded);
  for (const failureClass of FAILURE_CLASSES) {
    const n = seriesValue(families, 'baton_attempts_total', { outcome: 'failed', class: failureClass });
    if (n > 0) attempts.set(`failed/${failureClass}`, n);
  }
  return { runCounts, steps, attempts, due: seriesValue(families, 'baton_steps_due') };
}

function describeMetrics(name: string, makeTarget: () => MetricsTarget): void {
  describe(`baton serve --metrics: ${name}`, () => {
    it(
      'answers a bearer token only; after a scripted workload its figures are the store’s',
      async () => {
        const target = makeTarget();
        const { dir, home, storeArgs } = target;
        const baton = (args: string[], env: Record<string, string> = {}) =>
          runBaton([...args, ...storeArgs], { home, cwd: dir, env });
        // The store exists (migrated) before the console opens it read-only.
        expectExit(await baton(['flow', 'set', 'metrics-test', '--concurrency', '1']), 0);
        const tokenFile = metricsTokenFile(dir);
        const serving = spawnBaton(['serve', '--metrics-token-file', tokenFile, ...storeArgs], {
          home,
          cwd: dir,
        });
        const url = await waitFor(
          () => /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(serving.stdout())?.[1],
          30_000,
          'the metrics address',
        );
        const sessionToken = /\?token=(\S+)/.exec(serving.stdout())![1]!;
        const scrape = (token = METRICS_TOKEN) => scrapeMetrics(url, token);

        // Without the token, or with a wrong one: 401 before the store is read.
        expect((await fetch(url)).status).toBe(401);
        expect(
          (await fetch(url, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status,
        ).toBe(401);
        expect((await fetch(`${url}?token=${METRICS_TOKEN}`)).status).toBe(401);
        // The scrape token opens /metrics only; the session token opens it too.
        const origin = new URL(url).origin;
        expect(
          (await fetch(`${origin}/`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status,
        ).toBe(401);
        const first = await scrape(sessionToken);
        expect(seriesValue(first, 'baton_runs', { status: 'running' })).toBe(0);

        // The workload.
        const plan = (file: string, steps: object[], extra: Record<string, unknown> = {}, agent?: string) =>
          writePlan(dir, fixturePlan(steps, extra, agent), { name: file });
        const ok = plan('ok.yaml', [
          { id: 'a', instruction: 'a' },
          { id: 'b', instruction: 'b', dependsOn: ['a'] },
        ]);
        expectExit(await baton(['run', ok, '--id', 'ok']), 0);
        const flaky = plan('flaky.yaml', [{ id: 'a', instruction: 'a' }], {}, 'agent-flaky');
        expectExit(await baton(['run', flaky, '--id', 'flaky'], { FLAKY_COUNTER: join(dir, 'flaky') }), 0);
        const hookFile = join(dir, 'hook-calls');
        const fail = plan(
          'fail.yaml',
          [{ id: 'a', instruction: 'a' }],
          {
            defaults: { retry: { maxAttempts: 1 } },
            hooks: [{ on: ['blocked'], command: agentCommand('hook-fail-echo'), retries: 0 }],
          },
          'agent-fail',
        );
        expectExit(await baton(['run', fail, '--id', 'fail'], { HOOK_FILE: hookFile }), 1);
        expect(readFileSync(hookFile, 'utf8').trim().split('\n')).toHaveLength(1);
        const wait = plan('wait.yaml', [{ id: 'approve', wait: { for: 'approval', prompt: 'Go?' } }]);
        expectExit(await baton(['run', wait, '--detach', '--id', 'waiter']), 0);
        const reclaim = plan('reclaim.yaml', [{ id: 'a', instruction: 'a' }]);
        expectExit(await baton(['run', reclaim, '--detach', '--id', 'reclaimed']), 0);
        // A worker claims the step and dies at once: its lease runs out 1 ms later.
        const store = await target.open();
        try {
          const claimed = await store.cycle({
            owner: 'dead-worker',
            now: Date.now(),
            leaseMs: 1,
            completions: [],
            claimLimit: 1,
            random: Math.random,
            runId: 'reclaimed',
          });
          expect(claimed.claimed).toHaveLength(1);
          await waitFor(
            async () => seriesValue(await scrape(), 'baton_leases_expired') === 1 || undefined,
            30_000,
            'the expired lease',
          );
          // check reclaims it (interrupted) and puts the waiter's step waiting (exit 1: a run is
          // blocked); the interrupted step's retry comes due after that check started, so the next
          // check runs it.
          expectExit(await baton(['check']), 1);
          expectExit(await baton(['check']), 1);
          expectExit(await baton(['propose', ok]), 0);
          expectExit(await baton(['run', ok, '--detach', '--id', 'due']), 0);

          const expected = await expectedOf(store, Date.now());
          expect(expected.runCounts).toMatchObject({
            succeeded: 3,
            blocked: 1,
            running: 2,
            awaiting_approval: 1,
          });
          expect(Object.fromEntries(expected.attempts)).toEqual({
            'succeeded/': 4,
            'failed/agent_failed': 2,
            'failed/interrupted': 1,
          });
          expect(expected.due).toBe(1);
          // Counters catch up once the newest events settled (at once on SQLite, after 5 s on PostgreSQL).
          const families = await waitFor(
            async () => {
              const scraped = await scrape();
              const figures = figuresOf(scraped);
              return JSON.stringify([...figures.attempts].sort()) ===
                JSON.stringify([...expected.attempts].sort())
                ? scraped
                : undefined;
            },
            60_000,
            'the attempt counters',
          );
          const figures = figuresOf(families);
          expect(figures.runCounts).toEqual(expected.runCounts);
          expect(figures.steps).toEqual(expected.steps);
          expect(figures.due).toBe(expected.due);
          expect(seriesValue(families, 'baton_oldest_due_step_age_seconds')).toBeGreaterThanOrEqual(0);
          expect(seriesValue(families, 'baton_oldest_due_step_age_seconds')).toBeLessThanOrEqual(
            (Date.now() - expected.oldestDueAt) / 1000,
          );
          expect(seriesValue(families, 'baton_steps_waiting')).toBe((await store.listWaitingSteps()).total);
          expect(seriesValue(families, 'baton_steps_waiting')).toBe(1);
          expect(seriesValue(families, 'baton_leases_expired')).toBe(0);
          expect(seriesValue(families, 'baton_leases_reclaimed_total')).toBe(1);
          expect(seriesValue(families, 'baton_hook_deliveries', { state: 'failed' })).toBe(1);
          expect(seriesValue(families, 'baton_hook_deliveries', { state: 'pending' })).toBe(0);
          expect(seriesValue(families, 'baton_hook_deliveries', { state: 'retrying' })).toBe(0);
          // No label names a run or a step.
          const ids = new Set(['ok', 'flaky', 'fail', 'waiter', 'reclaimed', 'due', 'a', 'b', 'approve']);
          for (const family of families.values())
            for (const sample of family.samples)
              for (const value of Object.values(sample.labels)) expect(ids.has(value)).toBe(false);
        } finally {
          await store.close();
        }
        serving.child.kill('SIGTERM');
        expect((await serving.exited).code).toBe(0);
      },
      TEST_TIMEOUT,
    );
  });
}

describeMetrics('sqlite', sqliteMetricsTarget);
describeMetrics('postgres', () => postgresMetricsTarget(pg.server.url));
