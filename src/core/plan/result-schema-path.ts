import { closestMatch } from './issues.js';

/**
 * Whether `{{steps.<id>.result.<path>}}` can exist, asked of the step's `resultSchema` before
 * anything runs: a key the schema's `properties` do not list is most likely a typo. Only what the
 * schema says plainly is judged: past a `$ref`, a combinator (`allOf`, `anyOf`, ...) or a level
 * without `properties` or `items`, any path is accepted, and so is a key where the schema allows
 * other keys by a schema of their own (`additionalProperties: {...}`, `patternProperties`).
 */
export function resultSchemaPathProblem(
  stepId: string,
  schema: Record<string, unknown>,
  path: readonly string[],
): string | undefined {
  let node: unknown = schema;
  for (const [index, segment] of path.entries()) {
    if (!isPlainObject(node) || COMBINATORS.some((key) => Object.hasOwn(node as object, key)))
      return undefined;
    const properties = isPlainObject(node.properties) ? node.properties : undefined;
    if (properties !== undefined && Object.hasOwn(properties, segment)) {
      node = properties[segment];
      continue;
    }
    const items = node.items;
    if (items !== undefined) {
      if (!/^(0|[1-9][0-9]*)$/.test(segment)) return undefined;
      node = Array.isArray(items) ? items[Number(segment)] : items;
      continue;
    }
    if (properties === undefined) return undefined;
    const extra = node.additionalProperties;
    if ((extra !== undefined && extra !== false) || node.patternProperties !== undefined) return undefined;
    const known = Object.keys(properties);
    const match = closestMatch(segment, known);
    const where =
      index === 0 ? 'its resultSchema' : `its resultSchema at result.${path.slice(0, index).join('.')}`;
    const fix =
      match === undefined ? `add "${segment}" to the schema's properties` : `did you mean "${match}"?`;
    return `step "${stepId}" has no property "${segment}" in ${where} (properties: ${known.join(', ') || 'none'}): ${fix}`;
  }
  return undefined;
}

const COMBINATORS = ['$ref', 'allOf', 'anyOf', 'oneOf', 'not', 'if'];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
