/**
 * Tokens and cost by model in `baton serve --metrics`, a process that runs no engine: on SQLite and
 * on PostgreSQL, attempts that report usage run in another process (`baton run`: an agent, a model
 * step against the mock provider, an agent that fails and the model fallback that finishes its
 * step), and serve's `/metrics`, read by a strict parser, says per model what the store's attempt
 * rows say, each attempt under the label of the executor that ran it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockLlmServer } from '../src/testing/mock-llm/server.js';
import type { MockLlmServer } from '../src/testing/mock-llm/types.js';
import {
  expectExit,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import {
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
let llm: MockLlmServer | undefined;
beforeAll(async () => {
  llm = await startMockLlmServer();
});
afterEach(() => stopProcesses());
afterAll(async () => {
  removeTempDirs();
  await llm?.close();
});

interface Usage {
  input: number;
  output: number;
  cost: number;
}

/** Usage per model label as `/metrics` exports it. */
function usageOf(families: Map<string, Family>): Map<string, Usage> {
  const usage = new Map<string, Usage>();
  for (const sample of families.get('baton_tokens_total')?.samples ?? []) {
    const model = sample.labels.model!;
    const entry = usage.get(model) ?? { input: 0, output: 0, cost: 0 };
    entry[sample.labels.direction === 'input' ? 'input' : 'output'] = sample.value;
    entry.cost = seriesValue(families, 'baton_cost_usd_total', { model });
    usage.set(model, entry);
  }
  return usage;
}

function sameUsage(a: Map<string, Usage>, b: Map<string, Usage>): boolean {
  if (a.size !== b.size) return false;
  for (const [model, usage] of a) {
    const other = b.get(model);
    if (!other || other.input !== usage.input || other.output !== usage.output) return false;
    if (Math.abs(other.cost - usage.cost) > 1e-9) return false;
  }
  return true;
}

function describeUsage(name: string, makeTarget: () => MetricsTarget): void {
  describe(`baton serve --metrics, usage by model: ${name}`, () => {
    it(
      "counts the store's attempt rows per model, each under the executor that ran it",
      async () => {
        const target = makeTarget();
        const { dir, home, storeArgs } = target;
        const baton = (args: string[], env: Record<string, string> = {}) =>
          runBaton([...args, ...storeArgs], { home, cwd: dir, env });
        expectExit(await baton(['flow', 'set', 'usage-test', '--concurrency', '1']), 0);
        const serving = spawnBaton(['serve', '--metrics-token-file', metricsTokenFile(dir), ...storeArgs], {
          home,
          cwd: dir,
        });
        const url = await waitFor(
          () => /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(serving.stdout())?.[1],
          30_000,
          'the metrics address',
        );
        // Counters start at the first scrape: nothing ran yet.
        expect(usageOf(await scrapeMetrics(url)).size).toBe(0);

        const model = (provider: 'openai' | 'anthropic', name: string, prompt: string) => ({
          provider,
          model: name,
          baseUrl: provider === 'openai' ? llm!.openaiBaseUrl : llm!.anthropicBaseUrl,
          prompt,
        });
        const plan = writePlan(
          dir,
          fixturePlan(
            [
              { id: 'write', instruction: 'write' },
              { id: 'ask', model: model('openai', 'gpt-test', 'ask'), dependsOn: ['write'] },
              {
                id: 'flip',
                instruction: 'flip',
                dependsOn: ['ask'],
                retry: { maxAttempts: 1 },
                fallback: { model: model('anthropic', 'claude-test', 'fall back') },
              },
            ],
            {},
            'agent-costly',
          ),
          { name: 'usage.yaml' },
        );
        // Attempts in a process that exports nothing: `baton run`. The agent of `flip` fails after
        // reporting its usage; its model fallback finishes the step (degraded).
        expectExit(await baton(['run', plan, '--id', 'u1'], { COSTLY_FAIL: 'flip' }), 0);

        const store = await target.open();
        const expected = new Map<string, Usage>();
        try {
          const labelOf = (stepId: string, outcome: string) =>
            stepId === 'write'
              ? 'node'
              : stepId === 'ask'
                ? 'openai/gpt-test'
                : outcome === 'failed'
                  ? 'node'
                  : 'anthropic/claude-test';
          const attempts = await store.getAttempts('u1');
          expect(attempts.map((a) => [a.stepId, a.outcome]).sort()).toEqual([
            ['ask', 'succeeded'],
            ['flip', 'failed'],
            ['flip', 'succeeded'],
            ['write', 'succeeded'],
          ]);
          for (const attempt of attempts) {
            expect(attempt.usage).not.toBeNull();
            const label = labelOf(attempt.stepId, attempt.outcome);
            const entry = expected.get(label) ?? { input: 0, output: 0, cost: 0 };
            entry.input += attempt.usage!.inputTokens;
            entry.output += attempt.usage!.outputTokens;
            entry.cost += attempt.usage!.costUsd;
            expected.set(label, entry);
          }
        } finally {
          await store.close();
        }
        expect(expected.get('node')).toEqual({ input: 2000, output: 400, cost: 0.8 });
        expect(expected.get('openai/gpt-test')!.input).toBeGreaterThan(0);
        expect(expected.get('anthropic/claude-test')!.input).toBeGreaterThan(0);
        // Counted once the newest events settled (at once on SQLite, after 5 s on PostgreSQL).
        const scraped = await waitFor(
          async () => {
            const usage = usageOf(await scrapeMetrics(url));
            return sameUsage(usage, expected) ? usage : undefined;
          },
          60_000,
          'the usage counters',
        );
        expect(Object.fromEntries(scraped)).toEqual(Object.fromEntries(expected));
        // Scraped again: counted once.
        expect(Object.fromEntries(usageOf(await scrapeMetrics(url)))).toEqual(Object.fromEntries(expected));
        serving.child.kill('SIGTERM');
        expect((await serving.exited).code).toBe(0);
      },
      TEST_TIMEOUT,
    );
  });
}

describeUsage('sqlite', sqliteMetricsTarget);
describeUsage('postgres', () => postgresMetricsTarget(pg.server.url));
