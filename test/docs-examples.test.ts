/**
 * The examples of README.md and docs/*.md are code: every ```yaml or ```json block that is a plan
 * (it has a top-level `steps`) must pass the real plan parser, and every ```ts block must
 * type-check against the package's source, as a user's file importing `baton-steps` would. A
 * deliberate fragment or bad example is marked with `<!-- not-a-plan -->` on the line before its
 * fence and is then skipped. Failures name the page and line.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { planSchemaIssues } from '../src/executors/result-schema.js';
import { parsePlanText } from '../src/workflow/parse-plan-text.js';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const SKIP_MARK = '<!-- not-a-plan -->';

interface CodeBlock {
  /** The page, relative to the repository, e.g. docs/plans.md. */
  page: string;
  /** 1-based line of the block's first line of code in the page. */
  line: number;
  lang: string;
  text: string;
  /** Marked with SKIP_MARK on the line before its fence. */
  marked: boolean;
}

/** The fenced code blocks of a Markdown page, also those indented inside list items. */
function codeBlocks(page: string, markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent = '', fence = '', lang = ''] = open;
    const body: string[] = [];
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence)) {
      const line = lines[end]!;
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
      end++;
    }
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const marked = before >= 0 && lines[before]!.trim() === SKIP_MARK;
    blocks.push({ page, line: i + 2, lang: lang.toLowerCase(), text: body.join('\n'), marked });
    i = end;
  }
  return blocks;
}

/** README.md and every docs/*.md page, with their blocks. */
function documentedBlocks(): CodeBlock[] {
  const pages = [
    'README.md',
    ...readdirSync(join(repoRoot, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => `docs/${name}`),
  ];
  return pages.flatMap((page) => codeBlocks(page, readFileSync(join(repoRoot, page), 'utf8')));
}

function isPlan(block: CodeBlock): boolean {
  if (block.lang === 'yaml' || block.lang === 'yml') return /^steps\s*:/m.test(block.text);
  if (block.lang === 'json') return /"steps"\s*:/.test(block.text);
  return false;
}

const blocks = documentedBlocks();
const plans = blocks.filter((block) => isPlan(block) && !block.marked);
const typescript = blocks.filter((block) => block.lang === 'ts' || block.lang === 'typescript');

describe('the plans shown in README.md and docs/', () => {
  it('are found (the README plan and those of every page that opens with one)', () => {
    const pages = new Set(plans.map((plan) => plan.page));
    for (const page of ['README.md', 'docs/plans.md', 'docs/model-steps.md', 'docs/unattended.md']) {
      expect(pages, page).toContain(page);
    }
  });

  it.each(
    plans.map((plan) => [`${plan.page}:${plan.line}`, plan] as const),
  )('%s is a valid plan', (_, plan) => {
    const fileName = `${plan.page}:${plan.line}.${plan.lang === 'json' ? 'json' : 'yaml'}`;
    // The result schemas too, which are compiled before a run is stored (not by the parser).
    expect(planSchemaIssues(parsePlanText(plan.text, fileName))).toEqual([]);
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

describe('the links between README.md and the docs/ pages', () => {
  it('lead to a file that exists and, with #anchor, to a heading of it', () => {
    const problems: string[] = [];
    const pages = ['README.md', ...readdirSync(join(repoRoot, 'docs')).map((name) => `docs/${name}`)];
    for (const page of pages.filter((name) => name.endsWith('.md'))) {
      const text = readFileSync(join(repoRoot, page), 'utf8');
      text.split('\n').forEach((line, index) => {
        for (const link of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = link[1]!;
          if (/^[a-z]+:/.test(target)) continue;
          const [file = '', anchor] = target.split('#');
          const path = file === '' ? join(repoRoot, page) : join(repoRoot, dirname(page), file);
          let linked: string;
          try {
            linked = readFileSync(path, 'utf8');
          } catch {
            problems.push(`${page}:${index + 1}: ${target}: no such file`);
            continue;
          }
          if (anchor === undefined) continue;
          const anchors = [...linked.matchAll(/^#{1,6} (.*)$/gm)].map((heading) => anchorOf(heading[1]!));
          if (!anchors.includes(anchor)) problems.push(`${page}:${index + 1}: ${target}: no such heading`);
        }
      });
    }
    expect(problems).toEqual([]);
  });
});

const run = promisify(execFile);

/** tsc's diagnostics for block files, moved to the page and line each block came from. */
function placeDiagnostics(output: string, files: Map<string, CodeBlock>): string[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const at = /^(?:.*[\\/])?(block-\d+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line);
      const block = at ? files.get(at[1]!) : undefined;
      if (!at || !block) return line;
      return `${block.page}:${block.line + Number(at[2]) - 1}:${at[3]}: ${at[4]}`;
    });
}

describe('the TypeScript examples in README.md and docs/', () => {
  it('are found', () => {
    expect(typescript.map((block) => block.page)).toContain('docs/typescript-api.md');
  });

  it('type-check (strict) against the package source, as a user importing baton-steps would', {
    timeout: 180_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-docs-ts-'));
    try {
      const files = new Map<string, CodeBlock>();
      typescript.forEach((block, index) => {
        const name = `block-${index}.ts`;
        files.set(name, block);
        // Each block is a module of its own, whether or not it imports anything.
        writeFileSync(join(dir, name), `${block.text}\nexport {};\n`);
      });
      writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
      const tsconfig = {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023'],
          types: ['node'],
          typeRoots: [join(repoRoot, 'node_modules', '@types')],
          strict: true,
          noUncheckedIndexedAccess: true,
          esModuleInterop: true,
          resolveJsonModule: true,
          skipLibCheck: true,
          noEmit: true,
          paths: {
            'baton-steps': [join(repoRoot, 'src', 'index.ts')],
            'baton-steps/testing': [join(repoRoot, 'src', 'testing.ts')],
            'baton-steps/store': [join(repoRoot, 'src', 'store.ts')],
          },
        },
        files: [...files.keys()],
      };
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
      const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
      // One tsc process for every block: the package source is checked once.
      const result = await run(
        process.execPath,
        [tsc, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'],
        {
          cwd: dir,
          maxBuffer: 16 * 1024 * 1024,
        },
      ).then(
        () => ({ output: '' }),
        (error: { stdout?: string; stderr?: string }) => ({
          output: `${error.stdout ?? ''}${error.stderr ?? ''}` || String(error),
        }),
      );
      expect(placeDiagnostics(result.output, files)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
