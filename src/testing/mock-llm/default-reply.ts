import type { MockReply, MockRequest } from './types.js';

/** Above this many declared tools a request is taken for an agent CLI's turn. */
const AGENT_TOOL_COUNT = 8;

/**
 * The default `ok` answer:
 * - a request that asks for JSON output gets the smallest JSON its schema accepts, as text (so a
 *   CLI's router or classifier side request gets an answer it can parse);
 * - a request that declares more than AGENT_TOOL_COUNT tools (an agent CLI's whole tool set) gets
 *   the text `ok: ` + the first 40 characters of the last user text, never a tool call;
 * - otherwise, while tools are declared and no tool result has come back yet, a call of the first
 *   tool with the smallest arguments its schema accepts; else the same `ok: …` text.
 */
export function defaultReply(request: MockRequest): MockReply {
  if (request.outputSchema !== undefined)
    return { text: JSON.stringify(minimalValue(request.outputSchema, {})) };
  const first = request.tools[0];
  if (first && request.toolCount <= AGENT_TOOL_COUNT && !request.hasToolResult) {
    return { toolCalls: [{ name: first.name, arguments: minimalArguments(first.parameters) }] };
  }
  return { text: okText(request) };
}

/** `ok: ` + the first 40 characters of the last user text. */
export function okText(request: MockRequest): string {
  return `ok: ${request.lastUserText.slice(0, 40)}`;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function schemaType(schema: Record<string, unknown>): string | undefined {
  // Gemini schemas spell types in capitals (OBJECT, STRING, INTEGER).
  const type = schema.type;
  if (typeof type === 'string') return type.toLowerCase();
  if (Array.isArray(type)) {
    return type.find((t): t is string => typeof t === 'string' && t !== 'null')?.toLowerCase();
  }
  if (asRecord(schema.properties)) return 'object';
  return undefined;
}

/**
 * The smallest value a JSON Schema accepts, by these rules: enum → first value, const → it,
 * string → "x", number/integer → 1, boolean → true, array → [], object → its required properties,
 * anyOf/oneOf → the first branch; numbers respect `minimum`. Unknown shapes give `fallback` ("x").
 */
function minimalValue(schemaInput: unknown, fallback: unknown = 'x'): unknown {
  const schema = asRecord(schemaInput);
  if (!schema) return fallback;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches) && branches.length > 0) return minimalValue(branches[0]);
  switch (schemaType(schema)) {
    case 'string':
      return 'x';
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' && schema.minimum > 1 ? Math.ceil(schema.minimum) : 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'null':
      return null;
    case 'object': {
      const properties = asRecord(schema.properties) ?? {};
      const required = Array.isArray(schema.required) ? schema.required : [];
      const value: Record<string, unknown> = {};
      for (const name of required) {
        if (typeof name === 'string') value[name] = minimalValue(properties[name]);
      }
      return value;
    }
    default:
      return fallback;
  }
}

/** Minimal valid arguments for a tool's parameters schema (always an object). */
export function minimalArguments(parameters: unknown): Record<string, unknown> {
  return asRecord(minimalValue(parameters)) ?? {};
}

/** A value of the wrong type for `schema` (a number for a string, a string for anything else). */
function wrongValue(schema: Record<string, unknown>): unknown {
  return schemaType(schema) === 'string' ? 12345 : 'not-the-right-type';
}

/**
 * Arguments that break the schema: the first required property gets a value of the wrong type
 * (or is left out when its schema names no type). Without required properties, the first typed
 * property gets a wrong value; a schema with no properties gets `{ unexpected: true }`.
 */
export function invalidArguments(parameters: unknown): Record<string, unknown> {
  const schema = asRecord(parameters) ?? {};
  const properties = asRecord(schema.properties) ?? {};
  const value = minimalArguments(parameters);
  const required = Array.isArray(schema.required) ? schema.required.filter((n) => typeof n === 'string') : [];
  const target =
    required[0] ?? Object.keys(properties).find((name) => schemaType(asRecord(properties[name]) ?? {}));
  if (target === undefined) return { ...value, unexpected: true };
  const propertySchema = asRecord(properties[target]) ?? {};
  if (schemaType(propertySchema) === undefined) {
    delete value[target];
    return value;
  }
  value[target] = wrongValue(propertySchema);
  return value;
}
