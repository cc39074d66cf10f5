import type { ASTNode, Environment, ParseResult } from '@marcbachmann/cel-js';

/**
 * The expression language of a step's `when` and a fan-out's `forEach.items`: CEL (the Common
 * Expression Language), through @marcbachmann/cel-js, an interpreter (no eval, no generated code)
 * with no clock, no I/O and no dependencies. An expression sees two variables: `inputs` (the run's
 * inputs, strings) and `steps` (`steps.<id>.result`, `steps.<id>.status` of the steps it depends on).
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
    environment = new (loadLibrary().Environment)({ homogeneousAggregateLiterals: false })
      .registerVariable('inputs', 'map')
      .registerVariable('steps', 'map');
  }
  return environment;
}

/** Parsed expressions by text: a plan's conditions are parsed once per process, not per step or run. */
const parsed = new Map<string, ParseResult>();
const PARSED_LIMIT = 1000;

/** The expression parsed; throws the library's ParseError (its message shows where). */
export function parseWhen(expression: string): ParseResult {
  let result = parsed.get(expression);
  if (!result) {
    result = whenEnvironment().parse(expression);
    if (parsed.size >= PARSED_LIMIT) parsed.clear();
    parsed.set(expression, result);
  }
  return result;
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
