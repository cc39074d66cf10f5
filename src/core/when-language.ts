import { type ASTNode, Environment, type ParseResult } from '@marcbachmann/cel-js';

/**
 * The expression language of a step's `when`: CEL (the Common Expression Language), through
 * @marcbachmann/cel-js, an interpreter (no eval, no generated code) with no clock, no I/O and no
 * dependencies. An expression sees two variables: `inputs` (the run's inputs, strings) and
 * `steps` (`steps.<id>.result`, `steps.<id>.status` of the steps it depends on).
 */
let environment: Environment | undefined;

/**
 * Built on first use. The library itself loads with the core (bundled into the package, about 7 ms
 * of an `import`): the core decides synchronously, inside a store's transaction, so it cannot wait
 * for a module loaded on demand.
 */
function whenEnvironment(): Environment {
  environment ??= new Environment({ homogeneousAggregateLiterals: false })
    .registerVariable('inputs', 'map')
    .registerVariable('steps', 'map');
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
