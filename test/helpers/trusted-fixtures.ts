/**
 * The fixture agents and hook commands under test/fixtures, as BATON_TRUSTED_AGENTS lists them: the
 * operator's out-of-band trust that every test run gives them (tests of refusals set their own).
 */
import { readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const fixtures = fileURLToPath(new URL('../fixtures/', import.meta.url));

export const TRUSTED_FIXTURES = readdirSync(fixtures)
  .filter((name) => name.endsWith('.mjs'))
  .map((name) => join(fixtures, name))
  .join(delimiter);
