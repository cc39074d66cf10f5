import type { MockReply, MockRequest } from './types.js';

/**
 * The default `ok` answer: while tools are declared and no tool result has come back yet, call the
 * first tool with the smallest arguments its schema accepts; otherwise answer
 * `ok: ` + the first 40 characters of the last user message.
 */
export function defaultReply(request: MockRequest): MockReply {
  const first = request.tools[0];
  if (first && !hasToolResult(request)) {
    return { toolCalls: [{ name: first.name, arguments: minimalArguments(first.parameters) }] };
  }
  return { text: `ok: ${lastUserText(request).slice(0, 40)}` };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** OpenAI: a message with role `tool`. Anthropic: a user content block of type `tool_result`. */
export function hasToolResult(request: MockRequest): boolean {
  return request.messages.some((raw) => {
    const message = asRecord(raw);
    if (!message) return false;
    if (request.wire === 'openai') return message.role === 'tool';
    return (
      message.role === 'user' &&
      Array.isArray(message.content) &&
      message.content.some((block) => asRecord(block)?.type === 'tool_result')
    );
  });
}

/** The text of the last user message that has any text ('' when there is none). */
export function lastUserText(request: MockRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i -= 1) {
    const message = asRecord(request.messages[i]);
    if (message?.role !== 'user') continue;
    const text = contentText(message.content);
    if (text !== '') return text;
  }
  return '';
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => {
      const block = asRecord(part);
      return block?.type === 'text' && typeof block.text === 'string' ? block.text : '';
    })
    .join('');
}

function schemaType(schema: Record<string, unknown>): string | undefined {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.find((t): t is string => typeof t === 'string' && t !== 'null');
  if (asRecord(schema.properties)) return 'object';
  return undefined;
}

/**
 * The smallest value a JSON Schema accepts, by these rules: enum → first value, const → it,
 * string → "x", number/integer → 1, boolean → true, array → [], object → its required properties,
 * anyOf/oneOf → the first branch. Unknown shapes give "x".
 */
export function minimalValue(schemaInput: unknown): unknown {
  const schema = asRecord(schemaInput);
  if (!schema) return 'x';
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches) && branches.length > 0) return minimalValue(branches[0]);
  switch (schemaType(schema)) {
    case 'string':
      return 'x';
    case 'number':
    case 'integer':
      return 1;
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
      return 'x';
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
