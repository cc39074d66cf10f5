import { ExpressionLimitError, linearPattern } from '../expression-meter.js';
import { checkWhen, firstLineOf, parseWhen, type WhenNode } from '../when-language.js';
import { unknownStepProblem } from './graph.js';
import { closestMatch, type PlanIssue } from './issues.js';

/** What a step's `when` is checked against. */
export interface WhenContext {
  stepId: string;
  dependsOn: readonly string[];
  allStepIds: ReadonlySet<string>;
  inputNames: readonly string[];
}

/** The fields of `steps.<id>` a condition may read. */
const STEP_FIELDS = ['result', 'status'];
const EXAMPLE = 'e.g. steps.check.result.passed == false';

/**
 * The problems of one `when` expression, each a sentence with its fix: it must parse, type-check
 * (only `inputs` and `steps` are known; operators fit their operands), be true or false, and name
 * only declared inputs and the step's own direct dependencies (the steps that are settled when it
 * is decided).
 */
export function whenProblems(expression: string, context: WhenContext): string[] {
  const root = parsedOrProblem(expression, `write a CEL expression, ${EXAMPLE}`);
  if (typeof root === 'string') return [root];
  const problems = [...referenceProblems(root, context), ...patternProblems(root)];
  if (problems.length > 0) return problems;
  const checked = checkWhen(expression);
  if (!checked.valid) {
    return [
      `${JSON.stringify(expression)}: ${positioned(checked.error)}; a condition reads inputs.<name> and steps.<id>.result or .status, ${EXAMPLE}`,
    ];
  }
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    return [
      `${JSON.stringify(expression)} is of type ${checked.type}, not true or false: compare it, ${EXAMPLE}`,
    ];
  }
  return [];
}

/** The parsed expression, or the problem: over a limit (without quoting the text), or where it does not parse. */
export function parsedOrProblem(expression: string, fix: string): WhenNode | string {
  try {
    return parseWhen(expression).ast;
  } catch (error) {
    if (error instanceof ExpressionLimitError) return `the expression ${error.message}`;
    return `${JSON.stringify(expression)} does not parse: ${positioned(error)}; ${fix}`;
  }
}

/**
 * The patterns written in the expression (`x.matches("...")`) that the linear-time engine cannot
 * run (backreferences, lookaround): refused now rather than when the step is decided.
 */
export function patternProblems(root: WhenNode): string[] {
  const problems: string[] = [];
  const visit = (node: WhenNode): void => {
    if (node.op === 'rcall' && node.args[0] === 'matches') {
      const pattern = node.args[2]?.[0];
      if (pattern?.op === 'value' && typeof pattern.args === 'string') {
        try {
          linearPattern(pattern.args);
        } catch (error) {
          problems.push(
            `matches(${JSON.stringify(pattern.args)}): ${firstLineOf(error)}; Baton runs patterns in linear time (RE2 syntax): no backreferences or lookaround`,
          );
        }
      }
    }
    for (const child of childrenOf(node)) visit(child);
  };
  visit(root);
  return problems;
}

export function positioned(error: unknown): string {
  const start = (error as { range?: { start?: number } } | undefined)?.range?.start;
  return start === undefined ? firstLineOf(error) : `${firstLineOf(error)} at character ${start + 1}`;
}

/** Every `steps.<id>` and `inputs.<name>` the expression names, checked. */
export function referenceProblems(root: WhenNode, context: WhenContext): string[] {
  const problems: string[] = [];
  const visit = (node: WhenNode, parent: WhenNode | undefined): void => {
    if (node.op === 'id' && (node.args === 'steps' || node.args === 'inputs')) {
      const field = parent && fieldOf(parent, node);
      if (field === undefined) {
        problems.push(
          node.args === 'steps'
            ? `names steps without a step id: write steps.<id>.result or steps.<id>.status with one of ${listOrNone(context.dependsOn)}`
            : 'names inputs without an input name: write inputs.<name>',
        );
      } else if (node.args === 'steps') {
        problems.push(...stepProblems(field, context));
      } else if (!context.inputNames.includes(field)) {
        problems.push(inputProblem(field, context.inputNames));
      }
    }
    // steps.<id>.<field>: only result and status.
    const stepId = stepIdOf(node);
    if (stepId !== undefined) {
      const field = parent && fieldOf(parent, node);
      if (field === undefined || !STEP_FIELDS.includes(field)) {
        const written = field === undefined ? `steps.${stepId}` : `steps.${stepId}.${field}`;
        problems.push(
          `${written}: a step offers result and status: write steps.${stepId}.result or steps.${stepId}.status`,
        );
      }
    }
    for (const child of childrenOf(node)) visit(child, node);
  };
  visit(root, undefined);
  return [...new Set(problems)];
}

function stepProblems(target: string, context: WhenContext): string[] {
  if (target === context.stepId) {
    return [
      `names its own step "${target}": a condition reads the steps it depends on, decided before it runs`,
    ];
  }
  if (!context.allStepIds.has(target)) return [unknownStepProblem(target, [...context.allStepIds], true)];
  if (context.dependsOn.includes(target)) return [];
  return [
    `names step "${target}", which "${context.stepId}" does not depend on: add "${target}" to steps.${context.stepId}.dependsOn`,
  ];
}

function inputProblem(name: string, declared: readonly string[]): string {
  if (declared.length === 0) return `input "${name}" is not declared: add it under inputs:`;
  const match = closestMatch(name, declared);
  const fix = match === undefined ? 'declare it under inputs:' : `did you mean "${match}"?`;
  return `input "${name}" is not declared (declared: ${declared.join(', ')}): ${fix}`;
}

function listOrNone(ids: readonly string[]): string {
  return ids.length === 0 ? 'its dependencies (it has none: add dependsOn)' : ids.join(', ');
}

/** `steps.<id>` as written (`steps.x` or `steps["x"]`): the id, else undefined. */
function stepIdOf(node: WhenNode): string | undefined {
  if (node.op !== '.' && node.op !== '[]') return undefined;
  const object = node.args[0];
  return object.op === 'id' && object.args === 'steps' ? fieldOf(node, object) : undefined;
}

/** The constant field `parent` selects from `object` (`.name` or `["name"]`), else undefined. */
function fieldOf(parent: WhenNode, object: WhenNode): string | undefined {
  if (parent.op === '.' && parent.args[0] === object) return parent.args[1];
  if (parent.op === '[]' && parent.args[0] === object) {
    const key = parent.args[1];
    return key.op === 'value' && typeof key.args === 'string' ? key.args : undefined;
  }
  return undefined;
}

function childrenOf(node: WhenNode): WhenNode[] {
  const children: WhenNode[] = [];
  const collect = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(collect);
    else if (isNode(value)) children.push(value);
  };
  if (node.op !== 'value' && node.op !== 'id') collect(node.args);
  return children;
}

function isNode(value: unknown): value is WhenNode {
  return typeof value === 'object' && value !== null && 'op' in value && 'args' in value;
}

/** The problems of every step's `when`, at `steps.<id>.when`. */
export function checkWhens(
  steps: readonly { id: string; dependsOn: readonly string[]; when?: string }[],
  inputNames: readonly string[],
  pathOf: (index: number, ...fields: string[]) => string,
): PlanIssue[] {
  const allStepIds = new Set(steps.map((step) => step.id));
  return steps.flatMap((step, index) =>
    step.when === undefined
      ? []
      : whenProblems(step.when, { stepId: step.id, dependsOn: step.dependsOn, allStepIds, inputNames }).map(
          (problem) => ({ path: pathOf(index, 'when'), problem }),
        ),
  );
}
