/**
 * Model labels of `baton serve --metrics` are bounded, whatever the plans say: a name from plan
 * text is cut to 128 characters and exported escaped (a strict parser reads it back), and past the
 * first 50 models every other one is counted under `model="other"`, so 300 model names in one plan
 * give at most 51 series per family, the same ones from scrape to scrape, with every token counted.
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
  METRICS_TOKEN,
  metricsTokenFile,
  scrapeMetrics,
  sqliteMetricsTarget,
} from './helpers/metrics-targets.js';
import { type Family, seriesValue } from './helpers/prometheus-text.js';

let llm: MockLlmServer | undefined;
beforeAll(async () => {
  llm = await startMockLlmServer();
});
afterEach(() => stopProcesses());
afterAll(async () => {
  removeTempDirs();
  await llm?.close();
});

const LONG_NAME = `long-${'x'.repeat(64 * 1024)}`;
const ODD_NAME = 'odd "quoted" \\ back\nslash';
const MANY = 300;

/** Tokens per model label (input and output added up) of one scrape. */
function tokensByModel(families: Map<string, Family>): Map<string, number> {
  const tokens = new Map<string, number>();
  for (const sample of families.get('baton_tokens_total')?.samples ?? [])
    tokens.set(sample.labels.model!, (tokens.get(sample.labels.model!) ?? 0) + sample.value);
  return tokens;
}

const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

describe('baton serve --metrics: bounded model labels', () => {
  it('cuts a 64 KiB model name, escapes quotes, backslashes and newlines, and counts models past 50 as other', async () => {
    const { dir, home, open } = sqliteMetricsTarget();
    const baton = (args: string[]) => runBaton(args, { home, cwd: dir, timeoutMs: 170_000 });
    const model = (name: string) => ({
      provider: 'openai',
      model: name,
      baseUrl: llm!.openaiBaseUrl,
      prompt: 'say hi',
      price: { inputPerMTok: 1, outputPerMTok: 2 },
    });
    const plan = (file: string, names: string[]) =>
      writePlan(
        dir,
        {
          name: 'labels',
          limits: { maxSteps: 1000 },
          steps: names.map((name, i) => ({ id: `s${i}`, model: model(name) })),
        },
        { name: file },
      );
    // serve reads a store that exists: make it.
    expectExit(await baton(['flow', 'set', 'labels-test', '--concurrency', '1']), 0);
    const serving = spawnBaton(['serve', '--metrics-token-file', metricsTokenFile(dir)], { home, cwd: dir });
    const url = await waitFor(
      () => /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(serving.stdout())?.[1],
      30_000,
      'the metrics address',
    );
    // Counters start at the first scrape.
    expect(tokensByModel(await scrapeMetrics(url)).size).toBe(0);
    expectExit(await baton(['run', plan('odd.yaml', [LONG_NAME, ODD_NAME]), '--id', 'odd']), 0);
    const odd = await waitFor(
      async () => {
        const tokens = tokensByModel(await scrapeMetrics(url));
        return tokens.size === 2 ? tokens : undefined;
      },
      60_000,
      'the first two models',
    );
    const cut = [...odd.keys()].find((label) => label.startsWith('openai/long-'))!;
    expect([...cut]).toHaveLength(128);
    expect(cut).toBe(`openai/long-${'x'.repeat(128 - 'openai/long-'.length - 1)}…`);
    expect(odd.has(`openai/${ODD_NAME}`)).toBe(true);
    const raw = await (await fetch(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(raw).toContain('model="openai/odd \\"quoted\\" \\\\ back\\nslash"');
    // The name is not exported whole, three times over (tokens in and out, cost).
    expect(raw.length).toBeLessThan(16 * 1024);

    const names = Array.from({ length: MANY }, (_, i) => `model-${String(i).padStart(3, '0')}`);
    expectExit(await baton(['run', plan('many.yaml', names), '--id', 'many']), 0);
    const store = await open();
    let expected = 0;
    try {
      for (const runId of ['odd', 'many'])
        for (const attempt of await store.getAttempts(runId))
          if (attempt.outcome === 'succeeded')
            expected += attempt.usage!.inputTokens + attempt.usage!.outputTokens;
    } finally {
      await store.close();
    }
    const families = await waitFor(
      async () => {
        const scraped = await scrapeMetrics(url);
        return sum(tokensByModel(scraped).values()) === expected ? scraped : undefined;
      },
      60_000,
      'every attempt counted',
    );
    const tokens = tokensByModel(families);
    // 50 models of their own (the two first seen among them, still), and every other one's tokens under `other`.
    expect(tokens.size).toBe(51);
    expect(tokens.has(cut) && tokens.has(`openai/${ODD_NAME}`)).toBe(true);
    expect(tokens.get('other')).toBeGreaterThan(0);
    expect(seriesValue(families, 'baton_cost_usd_total', { model: 'other' })).toBeGreaterThan(0);
    expect(families.get('baton_tokens_total')!.samples).toHaveLength(51 * 2);
    expect(families.get('baton_cost_usd_total')!.samples).toHaveLength(51);
    for (const label of tokens.keys()) expect([...label].length).toBeLessThanOrEqual(128);
    serving.child.kill('SIGTERM');
    expect((await serving.exited).code).toBe(0);
  }, 240_000);
});
