import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import {
  listTemplateRefs,
  parseTemplateRef,
  renderTemplate,
  type TemplateContext,
} from '../src/core/plan/template.js';

const ctx: TemplateContext = {
  run: { id: 'run_01J', workspace: '/work/runs/run_01J' },
  inputs: { topic: 'durable execution', empty: '' },
  steps: { research: { summary: 'found 3 papers', outputs: ['study/notes.md', 'study/refs.bib'] } },
};

function renderError(text: string, context: TemplateContext = ctx): string {
  try {
    renderTemplate(text, context);
  } catch (error) {
    expect(isBatonError(error, 'PLAN_INVALID')).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`rendered ${text}`);
}

describe('listTemplateRefs', () => {
  it('lists references in order with their trimmed paths', () => {
    expect(listTemplateRefs('a {{inputs.topic}} b {{ steps.x.summary }} {{}} {{run.id}}')).toEqual([
      { raw: '{{inputs.topic}}', path: ['inputs', 'topic'] },
      { raw: '{{ steps.x.summary }}', path: ['steps', 'x', 'summary'] },
      { raw: '{{}}', path: [] },
      { raw: '{{run.id}}', path: ['run', 'id'] },
    ]);
  });

  it('ignores single braces and unclosed doubles; {{{x}}} holds {{x}}', () => {
    expect(listTemplateRefs('json {"a": {"b": 1}} and {prompt} and {{ open')).toEqual([]);
    expect(listTemplateRefs('{{{run.id}}}')).toEqual([{ raw: '{{run.id}}', path: ['run', 'id'] }]);
  });
});

describe('parseTemplateRef', () => {
  it('accepts only the fixed forms', () => {
    expect(parseTemplateRef(['run', 'id'])).toEqual({ kind: 'run', field: 'id' });
    expect(parseTemplateRef(['inputs', 'a-b_1'])).toEqual({ kind: 'input', name: 'a-b_1' });
    expect(parseTemplateRef(['steps', 's', 'outputs'])).toEqual({
      kind: 'step',
      stepId: 's',
      field: 'outputs',
    });
    for (const path of [
      [],
      ['run'],
      ['run', 'workspace', 'x'],
      ['inputs'],
      ['inputs', 'a', 'b'],
      ['inputs', 'a b'],
      ['steps', 's'],
      ['steps', 's', 'title'],
      ['steps', '', 'summary'],
      ['constructor'],
      ['__proto__'],
      ['env', 'HOME'],
    ]) {
      expect(parseTemplateRef(path)).toBeUndefined();
    }
  });
});

describe('renderTemplate', () => {
  it('substitutes run, inputs and step results; outputs join with ", "', () => {
    const text =
      'Summarise {{steps.research.outputs}} ({{ steps.research.summary }}) on {{inputs.topic}} into {{run.workspace}}/x.md [{{run.id}}]{{inputs.empty}}';
    expect(renderTemplate(text, ctx)).toBe(
      'Summarise study/notes.md, study/refs.bib (found 3 papers) on durable execution into /work/runs/run_01J/x.md [run_01J]',
    );
  });

  it('inserts values literally: replacement patterns and shell metacharacters pass through', () => {
    const nasty = "$& $1 $$ $` $' `rm -rf /` $(id) ; | && > < \\ \" ' \n\t {prompt} %s";
    const context: TemplateContext = { ...ctx, inputs: { x: nasty } };
    expect(renderTemplate('<{{inputs.x}}>', context)).toBe(`<${nasty}>`);
  });

  it('does not scan substituted values again', () => {
    const context: TemplateContext = {
      ...ctx,
      inputs: { x: '{{inputs.y}}', y: 'SECRET' },
      steps: { a: { summary: '{{run.id}} {{nonsense}}', outputs: ['{{inputs.y}}'] } },
    };
    expect(renderTemplate('{{inputs.x}} {{steps.a.summary}} {{steps.a.outputs}}', context)).toBe(
      '{{inputs.y}} {{run.id}} {{nonsense}} {{inputs.y}}',
    );
  });

  it('refuses prototype keys instead of reaching Object.prototype', () => {
    expect(renderError('{{constructor}}')).toMatch(
      /^\{\{constructor\}\} is not a template reference; allowed: /,
    );
    expect(renderError('{{inputs.constructor}}')).toBe(
      '{{inputs.constructor}}: the run has no value for input "constructor"',
    );
    expect(renderError('{{inputs.toString}}')).toBe(
      '{{inputs.toString}}: the run has no value for input "toString"',
    );
    expect(renderError('{{steps.__proto__.summary}}')).toBe(
      '{{steps.__proto__.summary}}: step "__proto__" has no result in this run (it has not succeeded yet)',
    );
    expect(renderError('{{steps.constructor.outputs}}')).toMatch(/step "constructor" has no result/);
    expect(renderError('{{steps.research.summary.constructor}}')).toMatch(/is not a template reference/);
    // Even with a prototype that has the key, only own properties count.
    const inherited = Object.create({ topic: 'from the prototype' }) as Record<string, string>;
    expect(renderError('{{inputs.topic}}', { ...ctx, inputs: inherited })).toMatch(
      /no value for input "topic"/,
    );
  });

  it('names what it cannot resolve', () => {
    expect(renderError('a {{inputs.missing}} b')).toBe(
      '{{inputs.missing}}: the run has no value for input "missing"',
    );
    expect(renderError('{{steps.later.outputs}}')).toBe(
      '{{steps.later.outputs}}: step "later" has no result in this run (it has not succeeded yet)',
    );
    expect(renderError('{{ env.HOME }}')).toBe(
      '{{ env.HOME }} is not a template reference; allowed: {{inputs.<name>}}, {{steps.<id>.summary}}, {{steps.<id>.outputs}}, {{steps.<id>.result}}, {{steps.<id>.result.<path>}}, {{run.workspace}}, {{run.id}}, {{run.status}} (cleanup steps)',
    );
  });

  it('never throws for text without "{{" and returns it unchanged', () => {
    const withoutOpen = fc
      .string({ unit: 'grapheme', maxLength: 200 })
      .filter((text) => !text.includes('{{'));
    fc.assert(
      fc.property(withoutOpen, (text) => {
        expect(renderTemplate(text, ctx)).toBe(text);
      }),
      { numRuns: 500 },
    );
    const braceHeavy = fc
      .array(fc.constantFrom('{', '}', 'a', '.', ' ', '$&', 'inputs', '\n'), { maxLength: 40 })
      .map((parts) => parts.join(''))
      .filter((text) => !text.includes('{{'));
    fc.assert(
      fc.property(braceHeavy, (text) => {
        expect(renderTemplate(text, ctx)).toBe(text);
      }),
      { numRuns: 500 },
    );
  });
});

describe('a substituted value is never expanded again', () => {
  const planted = '{{inputs.secret}} {{run.workspace}} {{steps.research.summary}}';
  const context: TemplateContext = {
    run: { id: 'r', workspace: '/w' },
    inputs: { secret: 's3cr3t', note: planted },
    steps: { research: { summary: planted, outputs: [planted], value: { text: planted } } },
    item: { name: 'page', value: { title: planted, tags: [planted] } },
  };

  it.each([
    ['an input', '{{inputs.note}}', planted],
    ["a step's summary", '{{steps.research.summary}}', planted],
    ["a step's outputs", '{{steps.research.outputs}}', planted],
    ["a step's result field", '{{steps.research.result.text}}', planted],
    ["a step's whole result", '{{steps.research.result}}', JSON.stringify({ text: planted })],
    ["a fan-out item's field", '{{page.title}}', planted],
    ['a whole fan-out item', '{{page}}', JSON.stringify({ title: planted, tags: [planted] })],
  ])('%s holding template text reaches the prompt as that text', (_, text, expected) => {
    expect(renderTemplate(`[${text}]`, context)).toBe(`[${expected}]`);
    expect(renderTemplate(`[${text}]`, context)).not.toContain('s3cr3t');
  });

  it("a fan-out item's missing field is an unresolvable reference, and other names are still templates", () => {
    expect(renderError('{{page.url}}', context)).toBe('{{page.url}}: the item has no url');
    expect(renderTemplate('{{page.tags}} {{inputs.secret}}', context)).toBe(
      `${JSON.stringify([planted])} s3cr3t`,
    );
  });
});
