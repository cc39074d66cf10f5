import type { ASTNode } from '@marcbachmann/cel-js';

/**
 * The cost budget of one evaluation of an expression (`when`, `forEach.items`). The CEL library has
 * limits on the parsed text (nodes, depth, literal sizes) but none at run time, and an expression
 * runs synchronously in the process that drives its run: three nested `all()` over 1,000-element
 * lists, or a quadratic over an agent's result, would hold that process (and every run it drives)
 * for minutes. So every node of a parsed expression is metered, as cel-go's cost limit does:
 * - each node evaluated costs 1 (a comprehension's body once per element, so nesting multiplies);
 * - what an operator or a function builds (`+`, `join()`, `split()`, …) costs its size: a list or
 *   map its length, a string one per STRING_CHARS_PER_UNIT characters;
 * - `matches()` runs in a linear-time engine (handed in: the core loads nothing), costing the text's
 *   length times the pattern's program size, charged before it runs;
 * - a built string or list longer than its limit stops the evaluation before it is used, and
 *   `join()` is refused before it allocates.
 * Past EXPRESSION_LIMITS.maxCost the evaluation throws ExpressionLimitError: the step is `invalid`
 * with that reason, at once, and the process goes on with its other work. 1,000,000 is about 0.1 s
 * of one core, as in Kubernetes' CEL budget per call.
 *
 * It reaches into the parsed tree of @marcbachmann/cel-js 8.0.0 (a node's `evaluate`, `meta`,
 * `args`): the version is pinned exactly, and test/core-expression-budget.test.ts fails if an
 * upgrade stops the meter from seeing a node.
 */

export const EXPRESSION_LIMITS = {
  /** Characters of an expression's text. */
  maxLength: 4_096,
  /** Steps of one evaluation (see above). */
  maxCost: 1_000_000,
  /** Characters of a string an expression builds. */
  maxStringLength: 1_048_576,
  /** Elements of a list (or entries of a map) an expression builds. */
  maxListLength: 100_000,
  /** Nodes of the parsed expression, and how deep they nest (the library's parse limits). */
  maxNodes: 4_096,
  maxDepth: 64,
} as const;

const STRING_CHARS_PER_UNIT = 16;
/** A pattern's program size times the text's length, per unit of cost. */
const MATCH_STATES_PER_UNIT = 64;

/** An expression went over one of EXPRESSION_LIMITS while it was parsed or evaluated. */
export class ExpressionLimitError extends Error {
  override name = 'ExpressionLimitError';
}

/** A pattern compiled by a linear-time engine: its test, and its program size (what a match costs per character). */
export interface LinearPattern {
  test(text: string): boolean;
  programSize: number;
}

let compileLinear: ((pattern: string) => LinearPattern) | undefined;

/** Hands the core the linear-time regular expression engine of `matches()` (the first one given is kept). */
export function provideLinearRegex(compile: (pattern: string) => LinearPattern): void {
  compileLinear ??= compile;
}

const patterns = new Map<string, LinearPattern>();
const PATTERNS_KEPT = 100;

/** The pattern compiled (cached by text); throws the engine's error for one it cannot run in linear time. */
export function linearPattern(pattern: string): LinearPattern {
  let compiled = patterns.get(pattern);
  if (!compiled) {
    if (!compileLinear)
      throw new Error(
        'the linear regex engine of matches() was not provided: import store/core-libraries.js',
      );
    compiled = compileLinear(pattern);
    if (patterns.size >= PATTERNS_KEPT) patterns.clear();
    patterns.set(pattern, compiled);
  }
  return compiled;
}

/** The budget of the evaluation under way (evaluation is synchronous: one at a time). */
let spent: number | undefined;
/**
 * Thrown again by every node once over budget: `all()` and `exists()` catch an element's error and
 * go on to the next element, and a new Error (with its stack) for each would cost seconds.
 */
let exceeded: ExpressionLimitError | undefined;

function charge(units: number): void {
  if (spent === undefined) return;
  spent += units;
  if (spent <= EXPRESSION_LIMITS.maxCost) return;
  exceeded ??= overBudget();
  throw exceeded;
}

function overBudget(): ExpressionLimitError {
  return new ExpressionLimitError(
    `went over the expression cost limit of ${EXPRESSION_LIMITS.maxCost.toLocaleString('en-US')} steps (expression.maxCost): it iterates or builds too much; decide on a smaller value, e.g. have the step it reads return a count or a flag`,
  );
}

/**
 * Runs `evaluate` with a fresh budget. CEL's `||`, `&&`, `all()` and `exists()` absorb an error
 * when another operand decides (`error || true` is true): once over budget every further node
 * throws at once, so what is left is bounded, and the value is refused even when it was decided.
 */
export function withinBudget<T>(evaluate: () => T): T {
  const [outerSpent, outerExceeded] = [spent, exceeded];
  spent = 0;
  exceeded = undefined;
  try {
    const value = evaluate();
    if (exceeded) throw exceeded;
    return value;
  } finally {
    [spent, exceeded] = [outerSpent, outerExceeded];
  }
}

type Node = ASTNode & { meta: NodeMeta; evaluate: Evaluate };
type Evaluate = (ev: Evaluator, ast: Node, ctx: unknown) => unknown;
interface Evaluator {
  run(ast: Node, ctx: unknown): unknown;
}
interface NodeMeta {
  evaluate: Evaluate;
  alternate?: Node;
  macro?: { evaluate: (ev: Evaluator, macro: unknown, ctx: unknown) => unknown };
}

/** Operators and calls whose result is a new value, charged by its size. */
const BUILDERS = new Set(['+', 'call', 'rcall']);

/** Meters every node of a parsed expression (its macros' expansions included), in place, once. */
export function meterExpression(root: ASTNode): void {
  const NodeClass = root.constructor;
  const seen = new Set<object>();
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    if (value instanceof NodeClass) {
      const node = value as Node;
      meterNode(node);
      visit(node.args);
      visit(node.meta.alternate);
      visit(node.meta.macro);
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (Object.getPrototypeOf(value) === Object.prototype) {
      for (const item of Object.values(value)) visit(item);
    }
  };
  visit(root);
}

function meterNode(node: Node): void {
  const meta = node.meta;
  const builds = BUILDERS.has(node.op);
  const special = node.op === 'rcall' ? specialMethod(node) : undefined;
  // An own property: the node's prototype method would replace itself with the unmetered one.
  node.evaluate = (ev, ast, ctx) => {
    charge(1);
    let result: unknown;
    if (meta.alternate) result = meta.alternate.evaluate(ev, meta.alternate, ctx);
    else if (meta.macro) result = meta.macro.evaluate(ev, meta.macro, ctx);
    else {
      const handled = special?.(ev, ctx);
      result = handled !== undefined ? handled.value : meta.evaluate.call(node, ev, ast, ctx);
    }
    if (builds) charge(sizeOf(result));
    return result;
  };
}

/** A value's size in cost units; throws when it is over its limit. */
function sizeOf(value: unknown): number {
  if (typeof value === 'string') {
    if (value.length > EXPRESSION_LIMITS.maxStringLength) throw tooLong('a string', value.length);
    return Math.ceil(value.length / STRING_CHARS_PER_UNIT);
  }
  const length = Array.isArray(value)
    ? value.length
    : value instanceof Map
      ? value.size
      : value instanceof Uint8Array
        ? Math.ceil(value.length / STRING_CHARS_PER_UNIT)
        : 0;
  if (length > EXPRESSION_LIMITS.maxListLength) throw tooLong('a list', length);
  return length;
}

function tooLong(what: string, length: number): ExpressionLimitError {
  const [limit, name, unit] =
    what === 'a string'
      ? [EXPRESSION_LIMITS.maxStringLength, 'expression.maxStringLength', 'characters']
      : [EXPRESSION_LIMITS.maxListLength, 'expression.maxListLength', 'elements'];
  return new ExpressionLimitError(
    `built ${what} of ${length.toLocaleString('en-US')} ${unit}, more than the ${limit.toLocaleString('en-US')} an expression may build (${name})`,
  );
}

type Special = (ev: Evaluator, ctx: unknown) => { value: unknown } | undefined;

/**
 * `text.matches(pattern)` in the linear engine, and `list.join(sep)` refused before it allocates;
 * any other receiver (a type error) goes to the library's own evaluation and its message.
 */
function specialMethod(node: Node): Special | undefined {
  const [method, receiverNode, argNodes] = node.args as [string, Node, Node[]];
  if (method === 'matches' && argNodes.length === 1) {
    return (ev, ctx) => {
      const text = ev.run(receiverNode, ctx);
      const pattern = ev.run(argNodes[0]!, ctx);
      if (typeof text !== 'string' || typeof pattern !== 'string') return undefined;
      const compiled = linearPattern(pattern);
      charge(Math.ceil(((text.length + 1) * compiled.programSize) / MATCH_STATES_PER_UNIT));
      return { value: compiled.test(text) };
    };
  }
  if (method === 'join' && argNodes.length <= 1) {
    return (ev, ctx) => {
      const list = ev.run(receiverNode, ctx);
      const separator = argNodes.length === 0 ? '' : ev.run(argNodes[0]!, ctx);
      if (!Array.isArray(list) || typeof separator !== 'string') return undefined;
      let length = separator.length * Math.max(0, list.length - 1);
      for (const item of list) {
        if (typeof item !== 'string') return undefined;
        length += item.length;
      }
      if (length > EXPRESSION_LIMITS.maxStringLength) throw tooLong('a string', length);
      return { value: list.join(separator) };
    };
  }
  return undefined;
}

/**
 * JSON data as the expression reads it: objects become Maps, so a key named `constructor`,
 * `__proto__` or `prototype` is an ordinary key (the library takes an object's type from its
 * `constructor`, and would find the key's value there).
 */
export function celValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(celValue);
  if (value === null || typeof value !== 'object' || value instanceof Map) return value;
  return new Map(Object.entries(value).map(([key, item]) => [key, celValue(item)]));
}
