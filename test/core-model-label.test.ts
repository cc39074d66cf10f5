/**
 * The bounds of a `model` label in /metrics (core/model-label.ts): cut by code points, never in
 * the middle of a character, and a fixed set of series per exporter, the first ones seen.
 */
import { describe, expect, it } from 'vitest';
import {
  cutLabel,
  MAX_MODEL_LABEL_CHARS,
  ModelSeries,
  modelLabel,
  OTHER_MODEL_LABEL,
} from '../src/core/model-label.js';
import { validatePlanObject } from '../src/core/plan/parse.js';

describe('model labels', () => {
  it('cuts a long name to the maximum by characters, ending in …, and leaves a short one alone', () => {
    const plan = validatePlanObject(
      {
        name: 'labels',
        steps: [{ id: 'a', model: { provider: 'openai', model: '🙂'.repeat(5000), prompt: 'hi' } }],
      },
      'labels',
    );
    const label = modelLabel(plan.steps[0]!);
    expect([...label]).toHaveLength(MAX_MODEL_LABEL_CHARS);
    expect(label).toBe(`openai/${'🙂'.repeat(MAX_MODEL_LABEL_CHARS - 'openai/'.length - 1)}…`);
    expect(label.isWellFormed()).toBe(true);
    expect(cutLabel('openai/gpt-4o-mini')).toBe('openai/gpt-4o-mini');
    expect(cutLabel('x'.repeat(MAX_MODEL_LABEL_CHARS))).toBe('x'.repeat(MAX_MODEL_LABEL_CHARS));
  });

  it('keeps a series for the first models seen, the same ones every time, and counts the rest as other', () => {
    const series = new ModelSeries(2);
    expect(['a', 'b', 'c', 'a', 'd', 'b'].map((label) => series.seriesOf(label))).toEqual([
      'a',
      'b',
      OTHER_MODEL_LABEL,
      'a',
      OTHER_MODEL_LABEL,
      'b',
    ]);
  });
});
