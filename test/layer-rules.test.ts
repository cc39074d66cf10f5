/**
 * The layer table of docs/ARCHITECTURE.md is enforced by the linter (biome.json's per-folder
 * noRestrictedImports), so `npm test` fails on an import that points up the table. Planted files
 * are linted with the repository's own biome.json in a folder of their own.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/cli.js';

/** [file, import specifier, allowed]: each planted file imports one thing. */
const PLANTED: [string, string, boolean][] = [
  ['src/console/pages/from-cli.ts', '../../cli/format.js', false],
  ['src/console/from-workflow.ts', '../workflow/baton.js', false],
  ['src/console/from-runtime.ts', '../runtime/format.js', true],
  ['src/engine/from-sqlite.ts', '../store/sqlite/sqlite-store.js', false],
  ['src/engine/from-postgres.ts', '../store/postgres/postgres-store.js', false],
  ['src/engine/from-store.ts', '../store/store.js', true],
  ['src/store/from-engine.ts', '../engine/engine.js', false],
  ['src/store/cycle/from-sqlite.ts', '../sqlite/run-rows.js', false],
  ['src/store/sqlite/from-postgres.ts', '../postgres/postgres-store.js', false],
  ['src/store/sqlite/from-cycle.ts', '../cycle/cycle-runs.js', true],
  ['src/executors/from-engine.ts', '../engine/engine.js', false],
  ['src/model-call/from-executors.ts', '../executors/step-executor.js', false],
  ['src/runtime/from-workflow.ts', '../workflow/baton.js', false],
  ['src/runtime/from-cli.ts', '../cli/format.js', false],
  ['src/runtime/from-engine.ts', '../engine/engine.js', true],
  ['src/workflow/from-cli.ts', '../cli/format.js', false],
  ['src/workflow/from-runtime.ts', '../runtime/home.js', true],
  ['src/legacy/from-runtime.ts', '../runtime/home.js', false],
  ['src/testing/from-store.ts', '../store/store.js', false],
  ['src/mcp/from-cli.ts', '../cli/format.js', false],
  ['src/mcp/from-sqlite.ts', '../store/sqlite/sqlite-store.js', false],
  ['src/mcp/from-runtime.ts', '../runtime/commands/run-commands.js', true],
  ['src/runtime/from-mcp.ts', '../mcp/mcp-server.js', false],
  // A front door reaches the store and the engine only through runtime/ (issue 39).
  ['src/cli/commands/from-store.ts', '../../store/store.js', false],
  ['src/cli/from-sqlite-idle.ts', '../store/sqlite/idle-read.js', false],
  ['src/cli/commands/from-engine.ts', '../../engine/engine.js', false],
  ['src/cli/from-runtime.ts', '../runtime/commands/run-commands.js', true],
  ['src/cli/from-legacy.ts', '../legacy/state-file.js', true],
  ['src/console/from-store.ts', '../store/store.js', false],
  ['src/console/pages/from-engine.ts', '../../engine/engine.js', false],
  ['src/mcp/from-store.ts', '../store/store.js', false],
  ['src/mcp/from-engine.ts', '../engine/engine.js', false],
  ['src/workflow/from-store.ts', '../store/core-libraries.js', false],
  ['src/workflow/from-engine.ts', '../engine/engine.js', false],
];

interface Diagnostic {
  category: string;
  message: string;
  location: { path: string };
}

const folder = mkdtempSync(join(tmpdir(), 'baton-layers-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function lintPlanted(): Diagnostic[] {
  copyFileSync(join(repoRoot, 'biome.json'), join(folder, 'biome.json'));
  for (const [file, specifier] of PLANTED) {
    mkdirSync(dirname(join(folder, file)), { recursive: true });
    writeFileSync(
      join(folder, file),
      `import * as planted from '${specifier}';\n\nexport const used = planted;\n`,
    );
  }
  let output: string;
  try {
    output = execFileSync(join(repoRoot, 'node_modules/.bin/biome'), ['lint', '--reporter=json', '.'], {
      cwd: folder,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    // Exit 1: diagnostics were found; the report is on stdout all the same.
    output = String((error as { stdout?: string }).stdout ?? '');
  }
  return (JSON.parse(output) as { diagnostics: Diagnostic[] }).diagnostics;
}

describe('layer rules', () => {
  it('refuse every import up the layer table and allow the ones down it', () => {
    const diagnostics = lintPlanted().filter((d) => d.category === 'lint/style/noRestrictedImports');
    const refused = new Set(diagnostics.map((d) => d.location.path));
    for (const [file, specifier, allowed] of PLANTED) {
      expect({ file, specifier, refused: refused.has(file) }).toEqual({
        file,
        specifier,
        refused: !allowed,
      });
    }
    const fromCli = diagnostics.find((d) => d.location.path === 'src/console/pages/from-cli.ts');
    expect(fromCli?.message).toMatch(/console\/ may not import cli\/: imports point down the layer table/);
  });
});
