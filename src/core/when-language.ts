import type { ASTNode, Environment, ParseResult } from '@marcbachmann/cel-js';
import {
  celValue,
  EXPRESSION_LIMITS,
  ExpressionLimitError,
  meterExpression,
  withinBudget,
} from './expression-meter.js';

/**
 * The expression language of a step's `when` and a fan-out's `forEach.items`: CEL (the Common
 * Expression Language), through @marcbachmann/cel-js, an interpreter (no eval, no generated code)
 * with no clock, no I/O and no dependencies. An expression sees two variables: `inputs` (the run's
 * inputs, strings) and `steps` (`steps.<id>.result`, `steps.<id>.status` of the steps it depends on).
 * Its text, parse and evaluation are bounded by EXPRESSION_LIMITS (core/expression-meter.ts).
 */
export type CelLibrary = Pick<typeof import('@marcbachmann/cel-js'), 'Environment'>;

/**
 * Returns the library, loaded the first time a plan has an expression: most plans have none, and
 * loading it costs a process about 7 ms. The core decides synchronously and loads nothing itself, so
 * the layers that validate plans or run the core's decisions hand it in (store/core-libraries.ts).
 */
let loadLibrary: (() => CelLibrary) | undefined;

/** Hands the core the loader of the CEL library (the first one given is kept). */
export function provideWhenLanguage(load: () => CelLibrary): void {
  loadLibrary ??= load;
}

/** The variables of a step's `when` and `forEach.items`. */
const STEP_VARIABLES = ['inputs', 'steps'] as const;
/** The variables of a trigger's `--when`: the delivery's `event` and its JSON `body`. */
export const TRIGGER_VARIABLES = ['event', 'body'] as const;
type Variables = typeof STEP_VARIABLES | typeof TRIGGER_VARIABLES;

const environments = new Map<Variables, Environment>();

/** Built on first use, one per set of variables (each a map). */
function whenEnvironment(variables: Variables = STEP_VARIABLES): Environment {
  let environment = environments.get(variables);
  if (!environment) {
    if (!loadLibrary) {
      // A bug of the caller's layer, not bad input.
      throw new Error(
        'the CEL library of when and forEach.items was not provided: import store/core-libraries.js before validating or running a plan',
      );
    }
    const { maxNodes, maxDepth } = EXPRESSION_LIMITS;
    environment = new (loadLibrary().Environment)({
      homogeneousAggregateLiterals: false,
      limits: {
        maxAstNodes: maxNodes,
        maxDepth,
        maxListElements: 1000,
        maxMapEntries: 1000,
        maxCallArguments: 32,
      },
    });
    for (const name of variables) environment = environment.registerVariable(name, 'map');
    environments.set(variables, environment);
  }
  return environment;
}

/** Parsed expressions by text: a plan's conditions are parsed once per process, not per step or run. */
const parsed = new Map<string, ParseResult>();
const PARSED_LIMIT = 1000;

/**
 * The expression parsed, every node metered; throws ExpressionLimitError for a text over its length
 * limit, else the library's ParseError (its message shows where).
 */
export function parseWhen(expression: string, variables: Variables = STEP_VARIABLES): ParseResult {
  const key = variables === STEP_VARIABLES ? expression : `${variables.join(',')}\u0000${expression}`;
  let result = parsed.get(key);
  if (!result) {
    if (expression.length > EXPRESSION_LIMITS.maxLength)
      throw new ExpressionLimitError(
        `is ${expression.length.toLocaleString('en-US')} characters, more than the ${EXPRESSION_LIMITS.maxLength.toLocaleString('en-US')} an expression may have (expression.maxLength): decide on a value a step computes instead`,
      );
    result = whenEnvironment(variables).parse(expression);
    meterExpression(result.ast);
    if (parsed.size >= PARSED_LIMIT) parsed.clear();
    parsed.set(key, result);
  }
  return result;
}

/** The variables an expression reads, as JSON. */
export interface ExpressionVariables {
  inputs: Readonly<Record<string, string>>;
  steps: Record<string, { result: unknown; status: string }>;
}

/**
 * The expression's value over the variables, within its cost budget: throws the library's error
 * for a type error or a missing field, ExpressionLimitError past a limit.
 */
export function evaluateExpression(expression: string, variables: ExpressionVariables): unknown {
  const evaluate = parseWhen(expression);
  const context = { inputs: celValue(variables.inputs), steps: celValue(variables.steps) };
  return withinBudget(() => evaluate(context));
}

/**
 * A trigger's condition over a delivery (`event`, `body`), within the same cost budget: throws as
 * evaluateExpression does.
 */
export function evaluateTriggerCondition(
  expression: string,
  variables: { event: Record<string, unknown>; body: unknown },
): unknown {
  const evaluate = parseWhen(expression, TRIGGER_VARIABLES);
  const context = { event: celValue(variables.event), body: celValue(variables.body) };
  return withinBudget(() => evaluate(context));
}

/** Type-checks a parsed expression: unknown variables and functions, operands of the wrong type. */
export function checkWhen(
  expression: string,
  variables: Variables = STEP_VARIABLES,
): { valid: boolean; type?: string; error?: Error } {
  return whenEnvironment(variables).check(expression);
}

export type WhenNode = ASTNode;

/** The first line of a library message: the rest is a drawing of the text with a caret. */
export function firstLineOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim();
}
