/** `{{steps.<id>.result}}` and `{{steps.<id>.result.<path>}}`: a step's structured result in a prompt. */
import { describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { renderTemplate, type TemplateContext } from '../src/core/plan/template.js';

const value = {
  passed: true,
  score: 0.75,
  title: 'A "quoted" {{run.id}} title',
  pages: [{ url: 'https://example.com/a' }, { url: 'https://example.com/b' }],
  none: null,
};

const ctx: TemplateContext = {
  run: { id: 'run_01J', workspace: '/w' },
  inputs: {},
  steps: {
    check: { summary: 'checked', outputs: [], value },
    plain: { summary: 'only a summary', outputs: [] },
    text: { summary: 'hello', outputs: [], value: 'hello' },
  },
};

function renderError(text: string): string {
  try {
    renderTemplate(text, ctx);
  } catch (error) {
    expect(isBatonError(error, 'PLAN_INVALID')).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`rendered ${text}`);
}

describe('result references', () => {
  it('read the value by path: strings as they are, anything else as JSON, arrays by index', () => {
    expect(renderTemplate('{{steps.check.result.passed}} {{steps.check.result.score}}', ctx)).toBe(
      'true 0.75',
    );
    expect(renderTemplate('{{ steps.check.result.pages.1.url }}', ctx)).toBe('https://example.com/b');
    expect(renderTemplate('{{steps.check.result.pages.0}}', ctx)).toBe('{"url":"https://example.com/a"}');
    expect(renderTemplate('{{steps.check.result.none}}', ctx)).toBe('null');
  });

  it('the whole result: the value as JSON (a string as it is), else the summary', () => {
    expect(renderTemplate('{{steps.check.result}}', ctx)).toBe(JSON.stringify(value));
    expect(renderTemplate('{{steps.text.result}}', ctx)).toBe('hello');
    expect(renderTemplate('{{steps.plain.result}}', ctx)).toBe('only a summary');
  });

  it('a substituted value is not rendered again', () => {
    expect(renderTemplate('{{steps.check.result.title}}', ctx)).toBe('A "quoted" {{run.id}} title');
  });

  it('a path the value does not have names the reference and what is there', () => {
    expect(renderError('{{steps.check.result.verdict}}')).toBe(
      '{{steps.check.result.verdict}}: the result of step "check" has no "verdict" in its result (keys: passed, score, title, pages, none)',
    );
    expect(renderError('{{steps.check.result.pages.2.url}}')).toBe(
      '{{steps.check.result.pages.2.url}}: the result of step "check" has no "2" in result.pages (a list of 2)',
    );
    expect(renderError('{{steps.check.result.passed.x}}')).toContain(
      'has no "x" in result.passed (a boolean)',
    );
    expect(renderError('{{steps.check.result.pages.01}}')).toContain('has no "01"');
    expect(renderError('{{steps.plain.result.x}}')).toBe(
      '{{steps.plain.result.x}}: step "plain" has no structured result (only a summary): give it a resultFile, or use {{steps.plain.result}}',
    );
  });

  it('never reaches a prototype', () => {
    expect(renderError('{{steps.check.result.constructor}}')).toContain('has no "constructor"');
    expect(renderError('{{steps.check.result.pages.length}}')).toContain('has no "length"');
  });
});
