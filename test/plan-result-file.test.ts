/**
 * `resultFile` and `resultSchema` in a plan, `{{steps.<id>.result...}}` references checked before
 * anything runs, and YAML tags the plan format does not know.
 */
import { describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { fallbackPlanStep } from '../src/core/fallback.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { planSchemaIssues } from '../src/executors/result-schema.js';
import { parsePlanText } from '../src/workflow/parse-plan-text.js';

const agent = { agent: { command: ['claude', '-p'] } };

function problems(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    expect(isBatonError(error, 'PLAN_INVALID')).toBe(true);
    return (error as Error).message.split('\n');
  }
  throw new Error('expected a PLAN_INVALID error');
}

const planProblems = (steps: object[]) =>
  problems(() => validatePlanObject({ name: 'p', defaults: agent, steps }, 'plan.yaml'));
const yamlProblems = (text: string) => problems(() => parsePlanText(text, 'plan.yaml'));

const schema = {
  type: 'object',
  properties: { passed: { type: 'boolean' }, pages: { type: 'array', items: { properties: { url: {} } } } },
};

describe('resultFile and resultSchema', () => {
  it('are kept on an agent step, and left out of steps without them (their plans keep their hash)', () => {
    const plan = validatePlanObject(
      {
        name: 'p',
        defaults: agent,
        steps: [
          { id: 'a', instruction: 'x', resultFile: 'out/result.json', resultSchema: schema },
          { id: 'b', instruction: 'y' },
        ],
      },
      'plan.yaml',
    );
    expect(plan.steps[0]).toMatchObject({ resultFile: 'out/result.json', resultSchema: schema });
    expect('resultFile' in plan.steps[1]!).toBe(false);
    expect('resultSchema' in plan.steps[1]!).toBe(false);
  });

  it.each([
    ['../result.json', 'steps.a.resultFile: "../result.json" leaves the run workspace through ".."'],
    ['out/../../result.json', 'steps.a.resultFile: "out/../../result.json" leaves the run workspace'],
    ['/tmp/result.json', 'steps.a.resultFile: "/tmp/result.json" is absolute'],
    ['.', 'steps.a.resultFile: "." is the run workspace itself'],
  ])('a resultFile outside the workspace (%s) is refused', (file, message) => {
    expect(planProblems([{ id: 'a', instruction: 'x', resultFile: file }])).toEqual([
      expect.stringContaining(`plan.yaml: ${message}`),
    ]);
  });

  it('is for agent steps only', () => {
    const model = { provider: 'openai', model: 'm', prompt: 'p' };
    expect(
      planProblems([
        { id: 'f', fn: 'g', resultFile: 'r.json' },
        { id: 'm', model, resultSchema: schema },
      ]),
    ).toEqual([
      'plan.yaml: 2 problems',
      'plan.yaml: steps.f.resultFile: is for agent steps (instruction), and a function step\'s result is the value its function returns: remove "resultFile"',
      'plan.yaml: steps.m.resultSchema: is for agent steps (instruction), and a model step\'s result is the model\'s answer: remove "resultSchema"',
    ]);
  });

  it('a resultSchema needs a resultFile, and must be a JSON object', () => {
    expect(planProblems([{ id: 'a', instruction: 'x', resultSchema: schema }])).toEqual([
      'plan.yaml: steps.a.resultSchema: checks the file named by resultFile, and there is none: add resultFile (e.g. result.json) or remove "resultSchema"',
    ]);
    expect(
      planProblems([{ id: 'a', instruction: 'x', resultFile: 'r.json', resultSchema: 'boolean' }]),
    ).toEqual([
      expect.stringContaining('plan.yaml: steps.a.resultSchema: expected a JSON Schema (an object)'),
    ]);
  });

  it('a resultSchema that ajv cannot compile is found before a run is stored', () => {
    const plan = validatePlanObject(
      {
        name: 'p',
        defaults: agent,
        steps: [{ id: 'a', instruction: 'x', resultFile: 'r.json', resultSchema: { type: 'nope' } }],
      },
      'plan.yaml',
    );
    expect(planSchemaIssues(plan)).toEqual([
      {
        path: 'steps.a.resultSchema',
        problem: expect.stringMatching(
          /^is not a valid JSON Schema \(draft-07\): schema is invalid: data\/type /,
        ),
      },
    ]);
    expect(planSchemaIssues({ ...plan, steps: [{ ...plan.steps[0]!, resultSchema: schema }] })).toEqual([]);
  });

  it("an agent fallback is held to the step's result file; a function fallback is not", () => {
    const [agentFallback, fnFallback] = validatePlanObject(
      {
        name: 'p',
        defaults: agent,
        steps: [
          {
            id: 'a',
            instruction: 'x',
            resultFile: 'r.json',
            resultSchema: schema,
            fallback: { instruction: 'y' },
          },
          { id: 'b', instruction: 'x', resultFile: 'r.json', fallback: { fn: 'g' } },
        ],
      },
      'plan.yaml',
    ).steps.map(fallbackPlanStep);
    expect(agentFallback).toMatchObject({ kind: 'agent', resultFile: 'r.json', resultSchema: schema });
    expect(fnFallback?.kind).toBe('fn');
    expect('resultFile' in fnFallback!).toBe(false);
  });
});

describe('{{steps.<id>.result...}} references', () => {
  const check = { id: 'check', instruction: 'x', resultFile: 'r.json', resultSchema: schema };

  it('are accepted for a dependency, with any path when it has no resultSchema', () => {
    const plain = { id: 'check', instruction: 'x', resultFile: 'r.json' };
    const reader = {
      id: 'r',
      instruction: '{{steps.check.result}} {{steps.check.result.anything.0.x}}',
      dependsOn: ['check'],
    };
    expect(() =>
      validatePlanObject({ name: 'p', defaults: agent, steps: [plain, reader] }, 'p'),
    ).not.toThrow();
  });

  it("are checked against the step's resultSchema: properties and array items", () => {
    const ok =
      '{{steps.check.result.passed}} {{steps.check.result.pages.0.url}} {{steps.check.result.pages.1}}';
    expect(() =>
      validatePlanObject(
        { name: 'p', defaults: agent, steps: [check, { id: 'r', instruction: ok, dependsOn: ['check'] }] },
        'p',
      ),
    ).not.toThrow();
    expect(
      planProblems([
        check,
        { id: 'r', instruction: 'Passed: {{steps.check.result.pased}}', dependsOn: ['check'] },
      ]),
    ).toEqual([
      'plan.yaml: steps.r.instruction: {{steps.check.result.pased}}: step "check" has no property "pased" in its resultSchema (properties: passed, pages): did you mean "passed"?',
    ]);
    expect(
      planProblems([
        check,
        { id: 'r', instruction: '{{steps.check.result.pages.0.title}}', dependsOn: ['check'] },
      ]),
    ).toEqual([
      'plan.yaml: steps.r.instruction: {{steps.check.result.pages.0.title}}: step "check" has no property "title" in its resultSchema at result.pages.0 (properties: url): add "title" to the schema\'s properties',
    ]);
  });

  it('name a step the reader depends on, like {{steps.<id>.summary}}', () => {
    expect(planProblems([check, { id: 'r', instruction: '{{steps.check.result.passed}}' }])).toEqual([
      expect.stringContaining(
        'plan.yaml: steps.r.instruction: {{steps.check.result.passed}}: step "check" is not a dependency of "r"',
      ),
    ]);
    expect(
      planProblems([check, { id: 'r', instruction: '{{steps.chek.result}}', dependsOn: ['check'] }]),
    ).toEqual([expect.stringContaining('{{steps.chek.result}}: unknown step "chek"')]);
  });

  it('a malformed result path is not a reference', () => {
    expect(
      planProblems([check, { id: 'r', instruction: '{{steps.check.result..passed}}', dependsOn: ['check'] }]),
    ).toEqual([expect.stringContaining('{{steps.check.result..passed}} is not a template reference')]);
  });
});

describe('YAML tags', () => {
  // The core schema's own tags (!!str, !!int, !!map, ...) stay allowed: only the unknown one is refused.
  const plan = (value: string) =>
    `name: !!str p\nlimits: !!map { maxSteps: !!int 5 }\nsteps: !!seq\n  - id: a\n    instruction: ${value}\n`;

  it.each([
    ['!!js/function "function () { return 1 }"', '!!js/function'],
    ['!!binary aGVsbG8=', '!!binary'],
    ['!!python/object:os.system {}', '!!python/object:os.system'],
    ['!custom x', '!custom'],
  ])('a tag the plan format does not know (%s) is refused with its line and column, the core tags are not', (value, tag) => {
    expect(yamlProblems(plan(value))).toEqual([
      `plan.yaml:5:18: tag ${tag} is not part of the plan format; remove it (write the value as plain text)`,
    ]);
  });
});
