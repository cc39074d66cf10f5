/**
 * The cost budget of an expression, in the pure core (core/expression-meter.ts): every construct
 * of the CEL library is metered (each macro's expansion, bind, has, the logical operators that
 * absorb errors), so an upgrade of the library that hid a node from the meter fails here; what an
 * expression builds is bounded; a linear pass over a large result stays within budget.
 */
import { describe, expect, it } from 'vitest';
import '../src/store/core-libraries.js';
import { EXPRESSION_LIMITS, ExpressionLimitError } from '../src/core/expression-meter.js';
import { whenProblems } from '../src/core/plan/check-when.js';
import { evaluateExpression } from '../src/core/when-language.js';

/** A result of `n` elements: enough that touching each one a few times goes over the budget. */
const big = (n: number) => Array.from({ length: n }, (_, i) => i);
const over = EXPRESSION_LIMITS.maxCost;

function evaluate(expression: string, result: unknown): unknown {
  return evaluateExpression(expression, { inputs: {}, steps: { a: { result, status: 'succeeded' } } });
}

function expectOverBudget(expression: string, result: unknown): void {
  expect(() => evaluate(expression, result)).toThrow(ExpressionLimitError);
  expect(() => evaluate(expression, result)).toThrow('(expression.maxCost)');
}

describe('the expression meter sees every construct', () => {
  it.each([
    ['all()', 'steps.a.result.all(x, x >= 0)'],
    ['exists()', 'steps.a.result.exists(x, x < 0)'],
    ['exists_one()', 'steps.a.result.exists_one(x, x == 1)'],
    ['map()', 'steps.a.result.map(x, x).size() > 0'],
    ['map() with a filter', 'steps.a.result.map(x, x >= 0, x).size() > 0'],
    ['filter()', 'steps.a.result.filter(x, x >= 0).size() > 0'],
    ['cel.bind()', 'cel.bind(l, steps.a.result, l.all(x, x >= 0))'],
    ['has() in a loop', 'steps.a.result.all(x, has(steps.a.status))'],
    ['a ternary in a loop', 'steps.a.result.all(x, x > 0 ? true : true)'],
    ['an error absorbed by ||', 'steps.a.result.all(x, x >= 0) || true'],
    ['an error absorbed by &&', 'steps.a.result.all(x, x >= 0) && false'],
    ['an error absorbed by exists()', '[1, 2].exists(y, steps.a.result.all(x, x >= 0)) || true'],
  ])('%s over 500,000 elements goes over the budget', (_, expression) => {
    expectOverBudget(expression, big(over / 2));
  });

  it.each([
    ['all()', 'steps.a.result.all(x, x >= 0)', true],
    ['map() and size()', 'steps.a.result.map(x, x + 1.0).size() == 30000', true],
    ['filter()', 'steps.a.result.filter(x, x >= 15000.0).size() == 15000', true],
  ])('a linear %s over an agent-sized result (30,000 elements) is within budget', (_, expression, value) => {
    expect(evaluate(expression, big(30_000))).toBe(value);
  });

  it('three nested all() over 1,000-element literals go over the budget', () => {
    const expression = `cel.bind(l, [${big(1000).join(',')}], l.all(x, l.all(y, l.all(z, true))))`;
    expect(expression.length).toBeLessThanOrEqual(EXPRESSION_LIMITS.maxLength);
    expectOverBudget(expression, null);
  });
});

describe('what an expression builds is bounded', () => {
  it('strings doubled by nested bind() stop at the string limit', () => {
    let expression = 's';
    for (let i = 0; i < 30; i++) expression = `cel.bind(s, s + s, ${expression})`;
    expect(() => evaluate(`cel.bind(s, "abcdefgh", ${expression}).size() > 0`, null)).toThrow(
      '(expression.maxStringLength)',
    );
  });

  it('lists doubled by nested bind() stop at the list limit or the budget', () => {
    let expression = 'l';
    for (let i = 0; i < 30; i++) expression = `cel.bind(l, l + l, ${expression})`;
    expect(() => evaluate(`cel.bind(l, [1, 2, 3, 4], ${expression}).size() > 0`, null)).toThrow(
      /\(expression\.(maxListLength|maxCost)\)/,
    );
  });

  it('join() is refused before it allocates a string over the limit', () => {
    const chunk = 'x'.repeat(60_000);
    expect(() =>
      evaluate(
        'steps.a.result.map(x, x).join("").size() > 0',
        big(20).map(() => chunk),
      ),
    ).toThrow(
      'built a string of 1,200,000 characters, more than the 1,048,576 an expression may build (expression.maxStringLength)',
    );
  });

  it('matches() over a long text with a large pattern is charged before it runs', () => {
    const text = 'ab'.repeat(32_768);
    expectOverBudget('steps.a.result.matches("(.{1,100}){1,10}[0-9]")', text);
    expect(evaluate('steps.a.result.matches("^(a+)+$")', `${'a'.repeat(40_000)}!`)).toBe(false);
    expect(evaluate('steps.a.result.matches("b[0-9]+")', 'ab12')).toBe(true);
  });
});

describe('at validation', () => {
  const context = { stepId: 's', dependsOn: ['a'], allStepIds: new Set(['a', 's']), inputNames: [] };

  it('an expression over the length limit is refused without quoting it', () => {
    const expression = `steps.a.result == "${'x'.repeat(100_000)}"`;
    const [problem] = whenProblems(expression, context);
    expect(problem).toBe(
      'the expression is 100,020 characters, more than the 4,096 an expression may have (expression.maxLength): decide on a value a step computes instead',
    );
  });

  it('an expression nested deeper than the depth limit is refused, not a stack overflow', () => {
    const expression = `${'('.repeat(500)}true${')'.repeat(500)}`;
    expect(whenProblems(expression, context)[0]).toMatch(/does not parse: .*depth/i);
  });
});
