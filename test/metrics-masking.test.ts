/**
 * `/metrics` is an output like any other: its model labels come from plan text, so whoever builds
 * the exporter (`baton serve --metrics`, `baton worker --metrics`, `baton.metrics()`) gets them
 * read through the masking boundary, even from a store that is not masked yet.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { BatonMetrics } from '../src/runtime/metrics.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

const SECRET = 'labelsecret-4242aa';
let dir: string | undefined;
let store: SqliteStore | undefined;
afterEach(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('BatonMetrics: labels masked', () => {
  it("masks a secret of the process's environment in a model's name", async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-metrics-masking-'));
    store = SqliteStore.open(join(dir, 'baton.db'));
    const plan = validatePlanObject(
      {
        name: 'labels',
        steps: [{ id: 's', model: { provider: 'openai', model: `gpt-${SECRET}`, prompt: 'hi' } }],
      },
      'labels',
    );
    await store.createRun({ id: 'm1', plan, planHash: 'h', inputs: {}, workspace: dir, now: 1000 });
    const metrics = new BatonMetrics(store, {
      masking: { env: { ACME_API_TOKEN: SECRET }, secretValues: [] },
    });
    // Counters start at the first scrape: the attempt ends after it.
    await metrics.text();
    const cycle = (now: number, completions: Parameters<SqliteStore['cycle']>[0]['completions']) =>
      store!.cycle({ owner: 'w1', now, leaseMs: 60_000, completions, claimLimit: 1, random: () => 0 });
    const [claimed] = (await cycle(1000, [])).claimed;
    const usage = { inputTokens: 7, outputTokens: 3, costUsd: 0.5 };
    const outcome = { ok: true as const, summary: 'hi', outputs: [], usage };
    await cycle(1100, [{ ...claimed!, owner: 'w1', outcome, startedAt: 1000, endedAt: 1100, logPath: null }]);
    const text = await metrics.text();
    expect(text).toContain('baton_tokens_total{model="openai/gpt-[redacted]",direction="input"} 7');
    expect(text).not.toContain(SECRET);
  });
});
