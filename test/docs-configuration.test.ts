/**
 * docs/configuration.md shows the one settings table in code (src/runtime/settings.ts), and that
 * table names every BATON_* variable the code reads: a setting added without its row, or a row the
 * page changed by hand, fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTINGS, settingsTable } from '../src/runtime/settings.js';
import { repoRoot } from './helpers/cli.js';

/** Variables Baton sets for an agent attempt (the page lists them apart), and names that are no variable. */
const NOT_SETTINGS = new Set([
  'BATON_RUN_ID',
  'BATON_STEP_ID',
  'BATON_ATTEMPT',
  'BATON_WORKSPACE',
  'BATON_IDEMPOTENCY_KEY',
  'BATON_STORE_ID',
  'BATON_TABLES',
  // The settings Baton hands its own tool approval server (mcp/tool-approval-server.ts), never a user.
  'BATON_TOOL_APPROVALS',
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('docs/configuration.md', () => {
  it('shows the settings table of src/runtime/settings.ts (else: npm run build && npm run docs:config)', () => {
    const page = readFileSync(join(repoRoot, 'docs/configuration.md'), 'utf8');
    const block = /<!-- settings:start[^>]*-->\n([\s\S]*?)\n<!-- settings:end -->/.exec(page);
    expect(block, 'docs/configuration.md has no settings block').not.toBeNull();
    expect(block![1], 'docs/configuration.md is stale: run npm run build && npm run docs:config').toBe(
      settingsTable(),
    );
  });

  it('the table names every BATON_* variable that src/ reads', () => {
    const named = new Set(SETTINGS.map((setting) => setting.variable));
    const read = new Set<string>();
    for (const file of sourceFiles(join(repoRoot, 'src'))) {
      for (const match of readFileSync(file, 'utf8').matchAll(/\bBATON_[A-Z_]+\b/g)) read.add(match[0]);
    }
    const missing = [...read].filter((name) => !NOT_SETTINGS.has(name) && !named.has(name)).sort();
    expect(missing, 'add these to SETTINGS in src/runtime/settings.ts').toEqual([]);
  });
});
