/**
 * A step's `forEach` is checked when the plan is validated, before anything is stored: `items`
 * must parse and name only declared inputs and the step's own dependencies, and `maxItems` is
 * required, at most 10,000. Each bad plan is refused with one message naming the file, the field
 * and the fix.
 */
import { describe, expect, it } from 'vitest';
import { PlanInvalidError } from '../src/core/plan/issues.js';
import { parsePlanText } from '../src/workflow/parse-plan-text.js';

const PLAN_YAML = (
  forEach: string,
  instruction = 'Summarise {{page.url}} into summaries/{{page.slug}}.md',
) => `
name: summarise-pages
inputs:
  topic: { default: "rust" }
steps:
  - id: research
    fn: research
  - id: other
    fn: other
  - id: summarise
    dependsOn: [research]
    instruction: ${JSON.stringify(instruction)}
    requiredOutputs: ["summaries/{{page.slug}}.md"]
    forEach: ${forEach}
`;

function problemOf(forEach: string, instruction?: string): string {
  try {
    parsePlanText(PLAN_YAML(forEach, instruction), 'plan.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(PlanInvalidError);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${forEach}`);
}

describe('forEach: valid fan-outs', () => {
  it('keeps the fan-out with its defaults (as: item, toleratedFailures: 0) and its {{<as>}} templates', () => {
    const plan = parsePlanText(
      PLAN_YAML('{ items: steps.research.result.pages, as: page, maxItems: 100, concurrency: 8 }'),
      'plan.yaml',
    );
    expect(plan.steps[2]!.forEach).toEqual({
      items: 'steps.research.result.pages',
      as: 'page',
      maxItems: 100,
      concurrency: 8,
      toleratedFailures: 0,
    });
    const defaults = parsePlanText(
      PLAN_YAML(
        '{ items: "inputs.topic.split(\\",\\")", maxItems: 5, toleratedFailures: "10%" }',
        'Write {{item}}',
      ),
      'plan.yaml',
    );
    expect(defaults.steps[2]!.forEach).toMatchObject({ as: 'item', toleratedFailures: '10%' });
    expect('forEach' in plan.steps[0]!).toBe(false);
  });
});

describe('forEach: refused plans', () => {
  it('refuses an items expression that does not parse', () => {
    expect(problemOf('{ items: "steps.research.result.pages[", as: page, maxItems: 10 }')).toMatch(
      /^plan\.yaml: steps\.summarise\.forEach\.items: "steps\.research\.result\.pages\[" does not parse: .*write a CEL expression giving a list/m,
    );
  });

  it('refuses items naming a step it does not depend on, with the fix', () => {
    expect(problemOf('{ items: steps.other.result.pages, as: page, maxItems: 10 }')).toContain(
      'plan.yaml: steps.summarise.forEach.items: names step "other", which "summarise" does not depend on: add "other" to steps.summarise.dependsOn',
    );
  });

  it('refuses items that cannot be a list', () => {
    expect(problemOf('{ items: "1 + 2", as: page, maxItems: 10 }')).toContain(
      'steps.summarise.forEach.items: "1 + 2" is of type int, not a list',
    );
  });

  it('refuses a forEach without maxItems, or above 10,000', () => {
    expect(problemOf('{ items: steps.research.result.pages, as: page }')).toContain(
      'plan.yaml: steps.summarise.forEach.maxItems: is required: the most items this step may expand into, at most 10000',
    );
    expect(problemOf('{ items: steps.research.result.pages, as: page, maxItems: 10001 }')).toContain(
      'steps.summarise.forEach.maxItems: 10001 is above 10000, the most items one step may expand into',
    );
  });

  it('refuses a bad toleratedFailures and an item name a template already uses', () => {
    expect(
      problemOf('{ items: steps.research.result.pages, as: page, maxItems: 5, toleratedFailures: "lots" }'),
    ).toContain('steps.summarise.forEach.toleratedFailures: expected a number of items >= 0 or a percentage');
    expect(problemOf('{ items: steps.research.result.pages, as: steps, maxItems: 5 }', 'x')).toContain(
      'steps.summarise.forEach.as: "steps" already names steps.<...> in templates',
    );
  });

  it('refuses {{<as>}} in a step without that fan-out (the template names nothing)', () => {
    expect(problemOf('{ items: steps.research.result.pages, as: doc, maxItems: 5 }')).toContain(
      '{{page.url}} is not a template reference',
    );
  });
});
