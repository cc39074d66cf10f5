#!/usr/bin/env node
// The CLI as an ES module: `node dist/cli/main.js <command>`. The installed `baton` command is
// dist/cli/baton.cjs (see launcher.ts), which answers an idle `baton check` before loading this.
import { runCli } from './run-cli.js';

process.exitCode = await runCli(process.argv);
