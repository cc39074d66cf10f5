// Builds the `baton` command, dist/cli/baton.cjs: src/cli/launcher.ts, the idle check it answers
// with and better-sqlite3's JavaScript, bundled into one CommonJS file (see launcher.ts for why).
// The rest of the CLI stays the ES modules tsc wrote, loaded by the launcher when it is needed.
import { chmodSync } from 'node:fs';
import { build } from 'rolldown';

const output = 'dist/cli/baton.cjs';
await build({
  input: 'src/cli/launcher.ts',
  platform: 'node',
  // Node's own modules and the full CLI stay outside (the SQLite addon is loaded by its path).
  external: [/^node:/, './run-cli.js'],
  logLevel: 'warn',
  output: { file: output, format: 'cjs', banner: '#!/usr/bin/env node' },
});
chmodSync(output, 0o755);
