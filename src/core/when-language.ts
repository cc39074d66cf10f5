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

let environment: Environment | undefined;

/** Built on first use. */
function whenEnvironment(): Environment {
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
    })
      .registerVariable('inputs', 'map')
      .registerVariable('steps', 'map');
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
export function parseWhen(expression: string): ParseResult {
  let result = parsed.get(expression);
  if (!result) {
    if (expression.length > EXPRESSION_LIMITS.maxLength)
      throw new ExpressionLimitError(
        `is ${expression.length.toLocaleString('en-US')} characters, more than the ${EXPRESSION_LIMITS.maxLength.toLocaleString('en-US')} an expression may have (expression.maxLength): decide on a value a step computes instead`,
      );
    result = whenEnvironment().parse(expression);
    meterExpression(result.ast);
    if (parsed.size >= PARSED_LIMIT) parsed.clear();
    parsed.set(expression, result);
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

/** Type-checks a parsed expression: unknown variables and functions, operands of the wrong type. */
export function checkWhen(expression: string): { valid: boolean; type?: string; error?: Error } {
  return whenEnvironment().check(expression);
}

export type WhenNode = ASTNode;

/** The first line of a library message: the rest is a drawing of the text with a caret. */
export function firstLineOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim();
}
