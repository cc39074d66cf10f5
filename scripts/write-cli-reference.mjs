#!/usr/bin/env node
// Writes docs/cli-reference.md from the built CLI's own `--help` (run `npm run build` first): the
// top-level help, then every command's and subcommand's, found by reading the "Commands:" list of
// each help text. With --check, writes nothing and exits 1 when the committed page is stale.
// test/docs-cli-reference.test.ts regenerates the page with cliReferencePage() and compares.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../', import.meta.url));
export const cliMain = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
export const pagePath = fileURLToPath(new URL('../docs/cli-reference.md', import.meta.url));

const INTRO = `# CLI reference

Every command's \`--help\`, as \`baton\` prints it. This page is generated: run
\`npm run build && npm run docs:cli\` after changing a command, option or help text
(\`test/docs-cli-reference.test.ts\` fails while it is stale). The pages that explain the commands:
[operating](operating.md), [running unattended](unattended.md), [the state.json drop-in](state-json.md),
[agent CLIs](agent-clis.md), [configuration](configuration.md) (\`--home\`, \`--store\` and the
variables).

Exit codes: **0** ok; **1** work failed, is blocked or was cancelled; **2** bad input or
configuration (one message on stderr; nothing stored is changed); \`baton run\` stopped by SIGINT or
SIGTERM: **130** or **143**. Every read command takes \`--json\`: indented on a terminal, one line when
piped or redirected (\`export\` always writes JSON lines).
`;

/** The environment of the CLI: no colours, no settings of the developer's shell. */
function helpEnv() {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('BATON_') && name !== 'FORCE_COLOR' && name !== 'NO_COLOR' && name !== 'COLUMNS')
      env[name] = value;
  }
  return env;
}

/** `baton <words> --help`, as printed to a pipe (commander wraps at 80 columns there). */
async function helpOf(words) {
  const { stdout } = await run(process.execPath, [cliMain, ...words, '--help'], {
    cwd: repoRoot,
    env: helpEnv(),
    maxBuffer: 4 * 1024 * 1024,
  });
  return stdout.replace(/\s+$/, '');
}

/** The command names listed under "Commands:" in a help text (not `help` itself). */
export function commandsListed(help) {
  const lines = help.split('\n');
  const start = lines.indexOf('Commands:');
  if (start === -1) return [];
  const names = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    const match = /^ {2}([a-z][\w-]*)/.exec(line);
    if (match && match[1] !== 'help') names.push(match[1]);
  }
  return names;
}

/**
 * Every command path (`[]` for `baton` itself, then `['init']`, ..., `['trust', 'add']`, ...) with its
 * help, depth-first in the order each help lists its commands.
 */
export async function collectHelp(words = []) {
  const help = await helpOf(words);
  // The commands of one level run together: each is a process of its own.
  const children = await Promise.all(commandsListed(help).map((name) => collectHelp([...words, name])));
  return [{ words, help }, ...children.flat()];
}

/** The page's text. */
export async function cliReferencePage() {
  if (!existsSync(cliMain)) throw new Error(`${cliMain} is missing: run \`npm run build\` first`);
  const entries = await collectHelp();
  const sections = entries.map(({ words, help }) => {
    const title = ['baton', ...words].join(' ');
    return `## ${title}\n\n\`\`\`text\n${help}\n\`\`\`\n`;
  });
  return `${INTRO}\n${sections.join('\n')}`;
}

/** Each `## baton ...` section of a page, by its title. */
export function sectionsOf(page) {
  const sections = new Map();
  const parts = page.split(/^## /m).slice(1);
  for (const part of parts) {
    const newline = part.indexOf('\n');
    sections.set(part.slice(0, newline), part);
  }
  return sections;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  let text;
  try {
    text = await cliReferencePage();
  } catch (error) {
    console.error(error.message);
    process.exit(2);
  }
  if (process.argv.includes('--check')) {
    const current = await readFile(pagePath, 'utf8').catch(() => '');
    if (current !== text) {
      console.error('docs/cli-reference.md is out of date: run `npm run docs:cli`');
      process.exit(1);
    }
    console.log('docs/cli-reference.md is up to date');
  } else {
    await writeFile(pagePath, text);
    console.log(`wrote docs/cli-reference.md (${sectionsOf(text).size} commands)`);
  }
}
