/**
 * The Prometheus text writer of /metrics: what a plan can put in a label (a model name with quotes,
 * backslashes or a newline) comes out escaped, and a histogram's buckets are cumulative, as the
 * strict parser of the tests (and a Prometheus server) reads them.
 */
import { describe, expect, it } from 'vitest';
import { MetricsText } from '../src/runtime/metrics-text.js';
import { parsePrometheusText, seriesValue } from './helpers/prometheus-text.js';

describe('MetricsText', () => {
  it('escapes label values and help texts, and writes histograms cumulatively', () => {
    const model = 'openai/"gpt"\\mini\nnext';
    const text = new MetricsText()
      .family('baton_tokens_total', 'counter', 'Tokens\\by model\nper direction.')
      .sample('baton_tokens_total', 12, { model, direction: 'input' })
      .family('baton_claim_cycle_seconds', 'histogram', 'Cycles.')
      .histogram('baton_claim_cycle_seconds', [0.01, 0.1], [2, 0, 1], 0.5)
      .family('baton_oldest_due_step_age_seconds', 'gauge', 'Age.')
      .sample('baton_oldest_due_step_age_seconds', Number.POSITIVE_INFINITY)
      .text();
    expect(text).toContain('model="openai/\\"gpt\\"\\\\mini\\nnext"');
    const families = parsePrometheusText(text);
    expect(seriesValue(families, 'baton_tokens_total', { model, direction: 'input' })).toBe(12);
    expect(families.get('baton_tokens_total')?.help).toBe('Tokens\\by model\nper direction.');
    expect(seriesValue(families, 'baton_claim_cycle_seconds_bucket', { le: '0.01' })).toBe(2);
    expect(seriesValue(families, 'baton_claim_cycle_seconds_bucket', { le: '0.1' })).toBe(2);
    expect(seriesValue(families, 'baton_claim_cycle_seconds_bucket', { le: '+Inf' })).toBe(3);
    expect(seriesValue(families, 'baton_claim_cycle_seconds_count')).toBe(3);
    expect(seriesValue(families, 'baton_claim_cycle_seconds_sum')).toBe(0.5);
    expect(seriesValue(families, 'baton_oldest_due_step_age_seconds')).toBe(Number.POSITIVE_INFINITY);
  });

  it('is refused by the strict parser when it is not the format (the parser is strict)', () => {
    expect(() => parsePrometheusText('garbage line here {{{\n')).toThrow(/line 1 .*expected " <value>/);
    expect(() => parsePrometheusText('# TYPE a gauge\na{b="c} 1\n')).toThrow(/unterminated|bad label/);
    expect(() => parsePrometheusText('# TYPE a gauge\na 1\na 2\n')).toThrow(/the same series twice/);
    expect(() =>
      parsePrometheusText(
        '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
      ),
    ).toThrow(/not cumulative/);
  });
});
