/**
 * `baton worker --metrics <port>` end to end, on SQLite and on PostgreSQL: a real worker process
 * serves its own `/metrics` on 127.0.0.1 for the token of `--metrics-token-file` only; after it ran
 * a run's steps, the exposition (read by a strict parser) has the store's figures, usage by model
 * among them, and this worker's claim-cycle latency histogram.
 */
import { existsSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  expectExit,
  expectRefused,
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

const pg = usePostgres();
afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

/** The histogram's `+Inf` bucket and count agree, and every bucket is cumulative. */
function expectCumulative(families: Map<string, Family>): void {
  const buckets = families
    .get('baton_claim_cycle_seconds')!
    .samples.filter((sample) => sample.name === 'baton_claim_cycle_seconds_bucket');
  for (let i = 1; i < buckets.length; i++)
    expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
  expect(buckets.at(-1)!.labels.le).toBe('+Inf');
  expect(buckets.at(-1)!.value).toBe(seriesValue(families, 'baton_claim_cycle_seconds_count'));
}

function describeWorkerMetrics(name: string, makeTarget: () => MetricsTarget): void {
  describe(`baton worker --metrics: ${name}`, () => {
    it(
      "answers the token only; after running steps it has its claim-cycle latency and the store's figures",
      async () => {
        const { dir, home, storeArgs } = makeTarget();
        const worker = spawnBaton(
          [
            'worker',
            '--quiet',
            '--metrics',
            '0',
            '--metrics-token-file',
            metricsTokenFile(dir),
            ...storeArgs,
          ],
          { home, cwd: dir },
        );
        const url = await waitFor(
          () => /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(worker.stderr())?.[1],
          30_000,
          'the metrics address',
        );
        // Without the token, or with a wrong one: 401 before the store is read.
        expect((await fetch(url)).status).toBe(401);
        const wrong = await fetch(url, { headers: { authorization: 'Bearer wrong-token-0123456789' } });
        expect(wrong.status).toBe(401);
        expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="baton metrics"');
        expect((await fetch(`${url}?token=${METRICS_TOKEN}`)).status).toBe(401);
        // /metrics alone.
        const origin = new URL(url).origin;
        const other = await fetch(`${origin}/`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
        expect(other.status).toBe(404);
        const first = await scrapeMetrics(url);
        expectCumulative(first);

        const plan = writePlan(
          dir,
          fixturePlan(
            [
              { id: 'a', instruction: 'a' },
              { id: 'b', instruction: 'b', dependsOn: ['a'] },
            ],
            {},
            'agent-costly',
          ),
          { name: 'costly.yaml' },
        );
        // Stored only: the worker runs its steps.
        expectExit(
          await runBaton(['run', plan, '--detach', '--id', 'w1', ...storeArgs], { home, cwd: dir }),
          0,
        );
        // Usage is counted once the newest events settled (at once on SQLite, after 5 s on PostgreSQL).
        const families = await waitFor(
          async () => {
            const scraped = await scrapeMetrics(url);
            const input = scraped
              .get('baton_tokens_total')
              ?.samples.find(
                (sample) => sample.labels.model === 'node' && sample.labels.direction === 'input',
              );
            return seriesValue(scraped, 'baton_runs', { status: 'succeeded' }) === 1 && input?.value === 2000
              ? scraped
              : undefined;
          },
          60_000,
          'the run and its usage in the worker’s metrics',
        );
        expect(seriesValue(families, 'baton_attempts_total', { outcome: 'succeeded', class: '' })).toBe(2);
        expect(seriesValue(families, 'baton_tokens_total', { model: 'node', direction: 'output' })).toBe(400);
        expect(seriesValue(families, 'baton_cost_usd_total', { model: 'node' })).toBeCloseTo(0.8);
        // The cycles that claimed and committed the two attempts are this worker's own.
        expect(seriesValue(families, 'baton_claim_cycle_seconds_count')).toBeGreaterThan(
          seriesValue(first, 'baton_claim_cycle_seconds_count'),
        );
        expect(seriesValue(families, 'baton_claim_cycle_seconds_sum')).toBeGreaterThan(0);
        expectCumulative(families);

        worker.child.kill('SIGTERM');
        expect((await worker.exited).code).toBe(0);
        // The metrics server stopped with the worker.
        await expect(fetch(url)).rejects.toThrow();
      },
      TEST_TIMEOUT,
    );
  });
}

describeWorkerMetrics('sqlite', sqliteMetricsTarget);
describeWorkerMetrics('postgres', () => postgresMetricsTarget(pg.server.url));

describe('baton worker --metrics: bad input', () => {
  it('refuses a host beyond this machine without a token, and metrics options without a port, storing nothing', async () => {
    const { dir, home } = sqliteMetricsTarget();
    const worker = (...args: string[]) => runBaton(['worker', ...args], { home, cwd: dir });
    expectRefused(
      await worker('--metrics', '0', '--metrics-host', '0.0.0.0'),
      '--metrics-host 0.0.0.0: serving /metrics beyond this machine needs a scrape token',
      '--metrics-token-file <file>',
    );
    expectRefused(
      await worker('--metrics-token-file', metricsTokenFile(dir)),
      '--metrics-token-file: add --metrics <port>',
    );
    expectRefused(await worker('--metrics', '70000'), '--metrics: expected a port from 0 to 65535');
    expect(existsSync(home)).toBe(false);
  });
});
