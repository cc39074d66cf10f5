/**
 * docs/cli-reference.md is the built CLI's own `--help`, for `baton` and every command and
 * subcommand (scripts/write-cli-reference.mjs writes it). These tests regenerate it in memory from
 * `dist/cli/main.js` (run `npm run build` first) and fail, naming the command, when the page is
 * stale; and they check that every `baton` command and option the pages show exists.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliReferencePage, pagePath, sectionsOf } from '../scripts/write-cli-reference.mjs';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));

let generated = '';
beforeAll(async () => {
  generated = await cliReferencePage();
}, 120_000);

describe('docs/cli-reference.md', () => {
  it("holds every command's --help as the built CLI prints it (else: npm run build && npm run docs:cli)", () => {
    const committed = readFileSync(pagePath, 'utf8');
    const fresh = sectionsOf(generated) as Map<string, string>;
    const page = sectionsOf(committed) as Map<string, string>;
    const stale = [
      ...[...fresh.keys()].filter((title) => !page.has(title)).map((title) => `${title}: missing`),
      ...[...page.keys()].filter((title) => !fresh.has(title)).map((title) => `${title}: no such command`),
      ...[...fresh]
        .filter(([title, text]) => page.has(title) && page.get(title) !== text)
        .map(([t]) => `${t}: differs`),
    ];
    expect(stale, 'docs/cli-reference.md is stale: run npm run docs:cli').toEqual([]);
    expect(committed, 'docs/cli-reference.md is stale: run npm run docs:cli').toBe(generated);
  });

  it('lists the subcommands too (trust add, flow set, skill install)', () => {
    const titles = [...(sectionsOf(generated) as Map<string, string>).keys()];
    expect(titles).toEqual(
      expect.arrayContaining([
        'baton',
        'baton run',
        'baton trust add',
        'baton flow set',
        'baton skill install',
      ]),
    );
  });
});

/** Every page a user reads. */
function pages(): { page: string; text: string }[] {
  const names = [
    'README.md',
    ...readdirSync(join(repoRoot, 'docs'))
      .filter((n) => n.endsWith('.md'))
      .map((n) => `docs/${n}`),
  ];
  return names
    .filter((page) => page !== 'docs/cli-reference.md')
    .map((page) => ({ page, text: readFileSync(join(repoRoot, page), 'utf8') }));
}

/** Command lines of the pages: shell blocks (comments dropped) and inline code starting with `baton `. */
function commandLines(text: string): { line: number; command: string }[] {
  const found: { line: number; command: string }[] = [];
  const lines = text.split('\n');
  let fence: string | null = null;
  let shell = false;
  lines.forEach((line, index) => {
    const open = /^\s*(`{3,})\s*(\w*)/.exec(line);
    if (open && fence === null) {
      fence = open[1]!;
      shell = open[2] === 'sh' || open[2] === 'bash';
      return;
    }
    if (fence !== null && line.trimStart().startsWith(fence)) {
      fence = null;
      return;
    }
    if (fence !== null) {
      if (shell) found.push({ line: index + 1, command: line.replace(/(^|\s)#.*$/, '') });
      return;
    }
    for (const code of line.matchAll(/`([^`]+)`/g)) found.push({ line: index + 1, command: code[1]! });
  });
  return found;
}

/** The options a help text lists. */
function optionsOf(help: string): Set<string> {
  return new Set([...help.matchAll(/^\s+(?:-\w, )?(--[a-z][\w-]*)/gm)].map((m) => m[1]!));
}

describe('the baton commands the pages show', () => {
  it('exist, with the options they are shown with', () => {
    const sections = sectionsOf(generated) as Map<string, string>;
    const globalOptions = optionsOf(sections.get('baton') ?? '');
    const problems: string[] = [];
    let checked = 0;
    for (const { page, text } of pages()) {
      for (const { line, command } of commandLines(text)) {
        for (const invocation of command.matchAll(
          /(?:^|[\s;&|(])(?:baton|node dist\/cli\/main\.js)\s+([^;&|]*)/g,
        )) {
          const words = invocation[1]!.trim().split(/\s+/);
          // Global options come first: --home <dir>, --store <url>.
          while (words[0] === '--home' || words[0] === '--store') words.splice(0, 2);
          const name = words[0] ?? '';
          if (!/^[a-z][a-z-]*$/.test(name)) continue;
          let title = `baton ${name}`;
          if (!sections.has(title)) {
            problems.push(`${page}:${line}: no command "${title}"`);
            continue;
          }
          const sub = words[1] ?? '';
          if (sections.has(`${title} ${sub}`)) title = `${title} ${sub}`;
          const known = optionsOf(sections.get(title)!);
          for (const word of words.slice(1)) {
            const option = /^\[?(--[a-z][\w-]*)/.exec(word)?.[1];
            if (option && !known.has(option) && !globalOptions.has(option) && option !== '--help') {
              problems.push(`${page}:${line}: "${title}" has no option ${option}`);
            }
          }
          checked++;
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('npm scripts the pages name exist in package.json', () => {
    const scripts = Object.keys(JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).scripts);
    const problems: string[] = [];
    for (const { page, text } of pages()) {
      text.split('\n').forEach((line, index) => {
        for (const match of line.matchAll(/npm run ([\w:-]+)/g)) {
          if (!scripts.includes(match[1]!))
            problems.push(`${page}:${index + 1}: no npm script "${match[1]}"`);
        }
      });
    }
    expect(problems).toEqual([]);
  });
});
