/**
 * Hostile expressions and patterns through the real `baton` command. A `when` or `forEach.items`
 * that would run for minutes (a quadratic over an agent's 30,000-element result, nested map()) goes
 * over its cost budget: its step is blocked `invalid` naming the limit, and the same `baton check`
 * goes on to finish another run. A catastrophic regular expression (`^(a+)+$` against an agent's
 * `"a"*40 + "!"`) in `matches()` or a `resultSchema` runs in linear time. A 100 KB expression and a
 * pattern with lookahead are refused at validation (exit 2, the limit's name, nothing stored). A key
 * named `constructor` in an agent's result is an ordinary key. Without the budget these tests hang
 * until Vitest's timeout: none of them measures time.
 */
import { existsSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  attempts,
  expectExit,
  expectRefused,
  removeTempDirs,
  runBaton,
  runStatus,
  stopProcesses,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir, stepOf } from './helpers/plans.js';

const TEST_TIMEOUT = 90_000;

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

/** `check` leaves RESULT_JSON as its result; `decide` runs when `when` says; `after` follows it. */
function decidingPlan(decide: Record<string, unknown>, checkFields: Record<string, unknown> = {}) {
  return fixturePlan(
    [
      { id: 'check', instruction: 'check', resultFile: 'result.json', ...checkFields },
      { id: 'decide', instruction: 'decide', dependsOn: ['check'], ...decide },
      { id: 'after', instruction: 'after', dependsOn: ['decide'] },
    ],
    { defaults: { retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 5 } } },
    'agent-result-file',
  );
}

/**
 * Stores the plan as run `id` in `home` (without running it), working in its own folder `<dir>/<id>`:
 * two runs whose `check` steps shared one workspace would remove each other's result.json, and the
 * one whose file went missing would retry after a backoff, outside the check's horizon.
 */
async function store(home: string, dir: string, plan: object, id: string) {
  const file = writePlan(dir, { ...plan, workspace: `./${id}` }, { name: `${id}.yaml` });
  expectExit(await runBaton(['run', file, '--id', id, '--detach'], { home, cwd: dir }), 0);
}

const thirtyThousandOnes = JSON.stringify(Array.from({ length: 30_000 }, () => 1));

describe('expressions with a budget', () => {
  it(
    "a quadratic when over an agent's 30,000-element result blocks its step invalid, and the same check finishes another run",
    async () => {
      const { dir, home } = planDir('baton-expr-');
      await store(
        home,
        dir,
        decidingPlan({ when: 'steps.check.result.all(x, steps.check.result.all(y, x == y))' }),
        'heavy',
      );
      await store(
        home,
        dir,
        fixturePlan([{ id: 'one', instruction: 'one' }], {}, 'agent-result-file'),
        'light',
      );
      const check = await runBaton(['check'], { home, cwd: dir, env: { RESULT_JSON: thirtyThousandOnes } });
      expectExit(check, 1);
      const heavy = await runStatus(home, 'heavy');
      expect(stepOf(heavy, 'decide')).toMatchObject({ status: 'blocked', lastFailureClass: 'invalid' });
      expect(stepOf(heavy, 'decide').lastError).toContain(
        'went over the expression cost limit of 1,000,000 steps (expression.maxCost)',
      );
      expect(stepOf(heavy, 'after').status).toBe('pending');
      expect((await runStatus(home, 'light')).status).toBe('succeeded');
    },
    TEST_TIMEOUT,
  );

  it(
    'forEach.items building nested lists and joined strings goes over its budget instead of hanging',
    async () => {
      const { dir, home } = planDir('baton-expr-');
      const items = (expression: string) =>
        fixturePlan(
          [
            { id: 'check', instruction: 'check', resultFile: 'result.json' },
            {
              id: 'fan',
              instruction: 'item {{item}}',
              dependsOn: ['check'],
              forEach: { items: expression, maxItems: 10 },
            },
          ],
          {},
          'agent-result-file',
        );
      await store(
        home,
        dir,
        items('steps.check.result.map(x, steps.check.result.map(y, x + y)).size() > 0 ? [1] : [2]'),
        'nested',
      );
      await store(
        home,
        dir,
        items(
          '[steps.check.result.map(x, "0123456789abcdef0123456789abcdef").join("")].map(s, s + s + s + s)',
        ),
        'joined',
      );
      expectExit(await runBaton(['check'], { home, cwd: dir, env: { RESULT_JSON: thirtyThousandOnes } }), 1);
      const nested = stepOf(await runStatus(home, 'nested'), 'fan');
      expect(nested).toMatchObject({ status: 'blocked', lastFailureClass: 'invalid' });
      expect(nested.lastError).toContain('(expression.maxCost)');
      const joined = stepOf(await runStatus(home, 'joined'), 'fan');
      expect(joined).toMatchObject({ status: 'blocked', lastFailureClass: 'invalid' });
      expect(joined.lastError).toMatch(/\(expression\.(maxCost|maxStringLength)\)/);
    },
    TEST_TIMEOUT,
  );

  it(
    "matches() with a catastrophic pattern over an agent's result is decided in linear time",
    async () => {
      const { dir, home } = planDir('baton-expr-');
      await store(home, dir, decidingPlan({ when: 'steps.check.result.text.matches("^(a+)+$")' }), 'redos');
      const text = `${'a'.repeat(40_000)}!`;
      expectExit(
        await runBaton(['check'], { home, cwd: dir, env: { RESULT_JSON: JSON.stringify({ text }) } }),
        0,
      );
      const run = await runStatus(home, 'redos');
      expect(stepOf(run, 'decide')).toMatchObject({ status: 'skipped' });
      expect(stepOf(run, 'after').status).toBe('succeeded');
    },
    TEST_TIMEOUT,
  );

  it(
    "keys named constructor, __proto__ and prototype in an agent's result are ordinary keys",
    async () => {
      const { dir, home } = planDir('baton-expr-');
      await store(
        home,
        dir,
        decidingPlan({
          when: 'steps.check.result.constructor == "c" && steps.check.result["__proto__"] == "p" && steps.check.result.prototype.x == 1',
        }),
        'keys',
      );
      const result = '{"constructor": "c", "__proto__": "p", "prototype": {"x": 1}}';
      expectExit(await runBaton(['check'], { home, cwd: dir, env: { RESULT_JSON: result } }), 0);
      expect(stepOf(await runStatus(home, 'keys'), 'decide').status).toBe('succeeded');
    },
    TEST_TIMEOUT,
  );

  it(
    'a 100 KB expression is refused at validation with the limit named, and nothing is stored',
    async () => {
      const { dir, home } = planDir('baton-expr-');
      const when = Array.from({ length: 20_000 }, () => 'true').join(' && ');
      expect(when.length).toBeGreaterThan(100_000);
      const file = writePlan(dir, decidingPlan({ when }));
      const result = await runBaton(['run', file, '--detach'], { home, cwd: dir });
      expectRefused(
        result,
        'steps.decide.when: the expression is 159,996 characters, more than the 4,096 an expression may have (expression.maxLength)',
      );
      expect(result.stderr.length).toBeLessThan(2_000);
      expect(existsSync(home)).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    'a pattern the linear-time engine cannot run (lookahead) is refused at validation',
    async () => {
      const { dir, home } = planDir('baton-expr-');
      const file = writePlan(dir, decidingPlan({ when: 'steps.check.result.text.matches("a(?=b)")' }));
      expectRefused(
        await runBaton(['run', file, '--detach'], { home, cwd: dir }),
        'steps.decide.when: matches("a(?=b)"): ',
        'no backreferences or lookaround',
      );
      expect(existsSync(home)).toBe(false);
    },
    TEST_TIMEOUT,
  );
});

describe('JSON Schema patterns that cannot hang', () => {
  it(
    "a resultSchema pattern ^(a+)+$ against an agent's 'a'*40 + '!' fails the attempt instead of hanging the check",
    async () => {
      const { dir, home } = planDir('baton-expr-');
      const schema = { type: 'object', properties: { text: { type: 'string', pattern: '^(a+)+$' } } };
      await store(home, dir, decidingPlan({}, { resultSchema: schema }), 'schema');
      const text = `${'a'.repeat(40)}!`;
      // The check ends after the failed attempt; its retry's backoff comes due after the check started.
      expectExit(
        await runBaton(['check'], { home, cwd: dir, env: { RESULT_JSON: JSON.stringify({ text }) } }),
        0,
      );
      const tries = await attempts(home, 'schema', 'check');
      expect(tries.map((t) => t.failureClass)).toEqual(['agent_failed']);
      expect(tries[0]?.message).toContain('/text: must match pattern "^(a+)+$"');
    },
    TEST_TIMEOUT,
  );

  it.each([
    ['a lookahead', { type: 'string', pattern: 'a(?=b)' }, 'is not a linear-time regular expression'],
    [
      'uniqueItems over objects without maxItems',
      { type: 'array', uniqueItems: true },
      'uniqueItems over items that are not declared scalars needs maxItems of at most 1000 (the limit of uniqueItems)',
    ],
  ])(
    'a resultSchema with %s is refused at validation, exit 2, nothing stored',
    async (_, schema, message) => {
      const { dir, home } = planDir('baton-expr-');
      const file = writePlan(dir, decidingPlan({}, { resultSchema: schema }));
      expectRefused(
        await runBaton(['run', file, '--detach'], { home, cwd: dir }),
        'steps.check.resultSchema: is not a valid JSON Schema (draft-07): ',
        message,
      );
      expect(existsSync(home)).toBe(false);
    },
    TEST_TIMEOUT,
  );
});
