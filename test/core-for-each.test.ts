/**
 * A fan-out's expansion in the pure core: claiming the group evaluates `items` and appends one
 * item step per element to the plan snapshot in that one transition, its `{{<as>}}` paths filled in
 * (requiredOutputs, resultFile) and its texts keeping them for the one rendering pass when the item
 * runs; an element without a field a template names, or items that are not a list, block the group
 * `invalid` and create no item.
 */

import { describe, expect, it } from 'vitest';
// The core is handed the CEL library by the layers that run it (the stores, the workflow API).
import '../src/store/core-libraries.js';
import type { StepOutcome } from '../src/core/failure.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { renderTemplate } from '../src/core/plan/template.js';
import type { RunState } from '../src/core/run-state.js';
import { claimStep, completeStep } from '../src/core/transitions.js';
import { runStateOf } from './helpers/run-state.js';

function runOf(forEach: Record<string, unknown>): RunState {
  const plan = validatePlanObject(
    {
      name: 'p',
      inputs: { prefix: { default: 'notes' } },
      steps: [
        { id: 'research', fn: 'research' },
        {
          id: 'summarise',
          dependsOn: ['research'],
          instruction: 'Summarise {{page.url}} ({{page}}) for {{inputs.prefix}}',
          requiredOutputs: ['{{inputs.prefix}}/{{page.slug}}.md'],
          resultFile: 'results/{{page.slug}}.json',
          forEach: { as: 'page', maxItems: 5, ...forEach },
        },
      ],
    },
    'p',
  );
  return runStateOf(plan, { inputs: { prefix: 'notes' } });
}

/** research succeeds with `value`; then the group is claimed. */
function expand(run: RunState, value: unknown) {
  const claimed = claimStep(run, 'research', 'w', 10, 1000).run;
  const outcome: StepOutcome = { ok: true, summary: 'found', outputs: [], value };
  const json = JSON.stringify({ summary: 'found', outputs: [], value });
  const released = completeStep(claimed, 'research', outcome, 11, () => 0, json).run;
  return claimStep(released, 'summarise', 'w', 12, 1000);
}

const PAGES = [
  { url: 'https://a.example/x', slug: 'a' },
  { url: 'https://b.example/y', slug: 'b' },
];

describe('forEach expansion in the core', () => {
  it('appends one item step per element with its paths filled, all in the transition that claims the group', () => {
    const transition = expand(runOf({ items: 'steps.research.result.pages' }), { pages: PAGES });
    const items = transition.run.plan.steps.slice(2);
    expect(items.map((step) => step.id)).toEqual(['summarise[0]', 'summarise[1]']);
    expect(items[1]).toMatchObject({
      instruction: 'Summarise {{page.url}} ({{page}}) for {{inputs.prefix}}',
      requiredOutputs: ['{{inputs.prefix}}/b.md'],
      resultFile: 'results/b.json',
      forEachItem: { group: 'summarise', index: 1, value: PAGES[1], as: 'page' },
    });
    const item = items[1]!.forEachItem!;
    expect(
      renderTemplate(items[1]!.instruction!, {
        run: { id: 'r', workspace: '/w' },
        inputs: { prefix: 'notes' },
        steps: {},
        item: { name: item.as!, value: item.value },
      }),
    ).toBe(`Summarise https://b.example/y (${JSON.stringify(PAGES[1])}) for notes`);
    expect('forEach' in items[0]!).toBe(false);
    expect(transition.planChanged).toBe(true);
    expect(transition.addedSteps).toEqual(['summarise[0]', 'summarise[1]']);
    expect(transition.run.steps.map((s) => [s.stepId, s.status])).toEqual([
      ['research', 'succeeded'],
      ['summarise', 'pending'],
      ['summarise[0]', 'ready'],
      ['summarise[1]', 'ready'],
    ]);
    expect(transition.events).toContainEqual({ type: 'step.expanded', stepId: 'summarise', items: 2 });
  });

  it('turns CEL values into JSON: ints of a list literal are numbers (not bigints, which JSON cannot hold)', () => {
    // The template names page.url, which a number lacks: the message shows the item as JSON.
    const transition = expand(runOf({ items: '[1, 2, 3].map(n, n * 2)' }), {});
    expect(transition.run.steps[1]!.blockedReason).toContain('item 0 has no url for {{page.url}} (item: 2)');
  });

  it('blocks the group invalid, creating no item, for an element without a field its template names', () => {
    const transition = expand(runOf({ items: 'steps.research.result.pages' }), {
      pages: [...PAGES, { url: 'https://c.example/z' }],
    });
    expect(transition.run.plan.steps).toHaveLength(2);
    const group = transition.run.steps[1]!;
    expect(group).toMatchObject({ status: 'blocked', lastFailureClass: 'invalid' });
    expect(group.blockedReason).toContain('item 2 has no slug for {{page.slug}}');
  });

  it('blocks the group invalid when items is not a list, or the expression fails on the result', () => {
    const notList = expand(runOf({ items: 'steps.research.result.pages' }), { pages: 'three' });
    expect(notList.run.steps[1]!.blockedReason).toContain('gave string, not a list');
    const missing = expand(runOf({ items: 'steps.research.result.pages' }), { other: [] });
    expect(missing.run.steps[1]).toMatchObject({ status: 'blocked', lastFailureClass: 'invalid' });
    expect(missing.run.steps[1]!.blockedReason).toContain('forEach.items steps.research.result.pages:');
  });
});
