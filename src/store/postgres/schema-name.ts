import { BatonError } from '../../core/errors.js';

/** The schema Baton uses when none is given. */
export const DEFAULT_SCHEMA = 'baton';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Refuses a schema name that is not a plain lower-case identifier (so quoting never changes its meaning). */
export function validateSchemaName(schema: string): string {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new BatonError(
      'CONFIG_INVALID',
      `postgres schema: ${JSON.stringify(schema)} is not a valid name; use 1 to 63 lower-case letters, digits or _, not starting with a digit (e.g. "baton")`,
    );
  }
  return schema;
}

/** The schema as a quoted identifier, for SQL text. */
export function quoteSchema(schema: string): string {
  return `"${validateSchemaName(schema)}"`;
}

/**
 * The channel a commit that made work due notifies: `baton_<schema>`, cut to PostgreSQL's 63-byte
 * identifier limit (two long names sharing a prefix then share a channel: only a spurious wake-up).
 */
export function notifyChannel(schema: string): string {
  return `baton_${validateSchemaName(schema)}`.slice(0, 63);
}
