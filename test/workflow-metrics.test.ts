/**
 * `Baton.metrics()`: a service embedding Baton answers its scraper with the same exposition as
 * `baton serve --metrics` (tokens and cost by model among it, from the store), plus what its own
 * workers measured: claim-cycle latency.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { Baton } from '../src/workflow/baton.js';
import { agentCommand } from './helpers/cli.js';
import { parsePrometheusText, seriesValue } from './helpers/prometheus-text.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An agent that reports 1000 input and 200 output tokens and $0.40, the way `claude -p` does. */
const costlyPlan = () =>
  validatePlanObject(
    {
      name: 'costly',
      steps: [
        { id: 'write', agent: { command: agentCommand('agent-costly') }, instruction: 'write' },
        { id: 'count', fn: 'count', dependsOn: ['write'] },
      ],
    },
    'test',
  );

describe('Baton.metrics()', () => {
  it("exports the store's figures, usage by model among them, and this process's cycle latency", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-metrics-api-'));
    dirs.push(dir);
    const baton = Baton.open({ home: join(dir, '.baton'), pollMs: 20 });
    try {
      baton.functions.register('count', () => 1);
      await baton.startPlan(costlyPlan(), {}, { runId: 'first' });
      await baton.result('first');
      const before = parsePrometheusText(await baton.metrics());
      expect(Baton.metricsContentType).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(seriesValue(before, 'baton_runs', { status: 'succeeded' })).toBe(1);
      expect(seriesValue(before, 'baton_claim_cycle_seconds_count')).toBeGreaterThan(0);
      // Counters of the event log start at the first scrape; usage by model is one of them.
      expect(seriesValue(before, 'baton_attempts_total', { outcome: 'succeeded', class: '' })).toBe(0);
      expect(before.get('baton_tokens_total')?.samples).toEqual([]);

      await baton.startPlan(costlyPlan(), {}, { runId: 'second' });
      await baton.result('second');
      const after = parsePrometheusText(await baton.metrics());
      expect(seriesValue(after, 'baton_runs', { status: 'succeeded' })).toBe(2);
      expect(seriesValue(after, 'baton_attempts_total', { outcome: 'succeeded', class: '' })).toBe(2);
      // Counted once, from the store, though this process's own engine ran the attempt.
      expect(seriesValue(after, 'baton_tokens_total', { model: 'node', direction: 'input' })).toBe(1000);
      expect(seriesValue(after, 'baton_tokens_total', { model: 'node', direction: 'output' })).toBe(200);
      expect(seriesValue(after, 'baton_cost_usd_total', { model: 'node' })).toBeCloseTo(0.4);
      expect(seriesValue(after, 'baton_claim_cycle_seconds_count')).toBeGreaterThan(
        seriesValue(before, 'baton_claim_cycle_seconds_count'),
      );
    } finally {
      await baton.close();
    }
  });

  it('counts the usage of fan-out items of every run of a plan, each run expanding into its own number of items', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-metrics-api-'));
    dirs.push(dir);
    const baton = Baton.open({ home: join(dir, '.baton'), pollMs: 20 });
    // The same plan (one hash): `list` says how many items `write` fans out into.
    const fanOut = validatePlanObject(
      {
        name: 'fan-out',
        inputs: { n: {} },
        limits: { maxSteps: 50 },
        steps: [
          { id: 'list', fn: 'list' },
          {
            id: 'write',
            dependsOn: ['list'],
            forEach: { items: 'steps.list.result', as: 'page', maxItems: 10 },
            agent: { command: agentCommand('agent-costly') },
            instruction: 'write {{page}}',
          },
        ],
      },
      'test',
    );
    try {
      baton.functions.register('list', (ctx) => Array.from({ length: Number(ctx.inputs.n) }, (_, i) => i));
      const tokens = async () =>
        seriesValue(parsePrometheusText(await baton.metrics()), 'baton_tokens_total', {
          model: 'node',
          direction: 'input',
        });
      await baton.metrics(); // Counters start here.
      await baton.startPlan(fanOut, { n: '1' }, { runId: 'one' });
      await baton.result('one');
      expect(await tokens()).toBe(1000);
      // A run of the same plan with more items than the one whose steps were labelled first.
      await baton.startPlan(fanOut, { n: '3' }, { runId: 'three' });
      await baton.result('three');
      expect(await tokens()).toBe(4000);
    } finally {
      await baton.close();
    }
  });
});
