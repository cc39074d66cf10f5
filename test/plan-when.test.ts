/**
 * A step's `when` is checked when the plan is validated, before anything is stored: it must
 * parse, name only declared inputs and the step's own dependencies, and be a condition. Each bad
 * plan is refused with one message naming the file, the field and the fix.
 */
import { describe, expect, it } from 'vitest';
import { PlanInvalidError } from '../src/core/plan/issues.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { parsePlanText } from '../src/workflow/parse-plan-text.js';

const REPORT_YAML = (when: string) => `
name: competitor-report
inputs:
  minScore: { default: "7" }
steps:
  - id: analyse
    fn: analyse
  - id: check
    dependsOn: [analyse]
    fn: check
  - id: fix-report
    dependsOn: [check]
    when: ${JSON.stringify(when)}
    fn: fix
`;

function problemOf(when: string): string {
  try {
    parsePlanText(REPORT_YAML(when), 'plan.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(PlanInvalidError);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${when}`);
}

describe('when: valid conditions', () => {
  it('keeps the expression on the step and leaves steps without one alone', () => {
    const plan = parsePlanText(REPORT_YAML('steps.check.result.passed == false'), 'plan.yaml');
    expect(plan.steps.map((step) => step.when)).toEqual([
      undefined,
      undefined,
      'steps.check.result.passed == false',
    ]);
    expect('when' in plan.steps[0]!).toBe(false);
  });

  it('accepts status, declared inputs, bracket access and macros', () => {
    for (const when of [
      'steps.check.status == "skipped" || !steps.check.result.passed',
      'int(inputs.minScore) > 3 && steps["check"].result.score < 7.5',
      'steps.check.result.issues.exists(i, i.severity == "high")',
      'has(steps.check.result.passed)',
    ]) {
      expect(() => parsePlanText(REPORT_YAML(when), 'plan.yaml'), when).not.toThrow();
    }
  });
});

describe('when: refused plans', () => {
  it('an expression that does not parse: where, and what to write', () => {
    expect(problemOf('steps.check.result.passed ==')).toBe(
      'plan.yaml: steps.fix-report.when: "steps.check.result.passed ==" does not parse: Unexpected token: EOF at character 29; write a CEL expression, e.g. steps.check.result.passed == false',
    );
  });

  it('a step it does not depend on: add it to dependsOn', () => {
    expect(problemOf('steps.analyse.result.ok')).toBe(
      'plan.yaml: steps.fix-report.when: names step "analyse", which "fix-report" does not depend on: add "analyse" to steps.fix-report.dependsOn',
    );
  });

  it('an unknown step, its own step, a field a step does not have', () => {
    expect(problemOf('steps.chek.result.passed')).toBe(
      'plan.yaml: steps.fix-report.when: unknown step "chek" (known: analyse, check, fix-report): did you mean "check"?',
    );
    expect(problemOf('steps["fix-report"].status == "ready"')).toMatch(/names its own step "fix-report"/);
    expect(problemOf('steps.check.summary == "ok"')).toBe(
      'plan.yaml: steps.fix-report.when: steps.check.summary: a step offers result and status: write steps.check.result or steps.check.status',
    );
  });

  it('an input that is not declared, and other names', () => {
    expect(problemOf('inputs.minScor == "7"')).toBe(
      'plan.yaml: steps.fix-report.when: input "minScor" is not declared (declared: minScore): did you mean "minScore"?',
    );
    expect(problemOf('result.passed == false')).toMatch(
      /^plan\.yaml: steps\.fix-report\.when: "result\.passed == false": Unknown variable: result at character 1; a condition reads inputs\.<name> and steps\.<id>\.result or \.status/,
    );
  });

  it('an expression that is not a condition, and a when that is not text', () => {
    expect(problemOf('1 + 2')).toBe(
      'plan.yaml: steps.fix-report.when: "1 + 2" is of type int, not true or false: compare it, e.g. steps.check.result.passed == false',
    );
    expect(() =>
      validatePlanObject({ name: 'p', steps: [{ id: 'a', fn: 'a', when: true }] }, 'plan.json'),
    ).toThrow(
      'plan.json: steps.a.when: expected a condition as text, e.g. "steps.check.result.passed == false", got true',
    );
    expect(() =>
      validatePlanObject({ name: 'p', steps: [{ id: 'a', fn: 'a', when: '' }] }, 'plan.json'),
    ).toThrow(/steps\.a\.when: expected a condition/);
  });
});
