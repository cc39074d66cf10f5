/**
 * What `npm pack` makes installs into an empty folder and works there, by its npm name, as README
 * and getting-started tell a user without the npm registry to install it (packed into the project,
 * then `npm install ./baton-steps-<version>.tgz`; `npx baton --help` answers there): the
 * `baton` bin runs a YAML plan (an agent step, then a model step against the mock provider) on
 * SQLite, and a TypeScript ES module consumer type-checks against the installed types (strict,
 * without skipLibCheck, and without the drivers' `@types`, which are not dependencies) and runs a
 * workflow and a plan with an fn step, then workflows on stores it opened from `baton-steps/store`:
 * SQLite and PostgreSQL, each creating its schema from the migrations the package ships. Nothing
 * resolves from this repository: the folder is under os.tmpdir(), and the dependencies come from
 * the npm registry (or its local cache).
 * Needs the build (`npm run build`), a PostgreSQL 15 install (test/helpers/postgres.ts) and
 * access to the npm registry or a warm npm cache.
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockLlmServer } from '../src/testing/mock-llm/server.js';
import type { MockLlmServer } from '../src/testing/mock-llm/types.js';
import { agentCommand, repoRoot, runBaton, writePlan } from './helpers/cli.js';
import { startPostgres, type TestPostgres } from './helpers/postgres.js';

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  exports: Record<string, { types: string }>;
};
/** The tarball `npm pack` writes, as the docs name it. */
const tarball = `${manifest.name}-${manifest.version}.tgz`;
const dir = mkdtempSync(join(tmpdir(), 'baton-install-'));
const app = join(dir, 'app');
const installed = join(app, 'node_modules', manifest.name);
const installedBin = join(app, 'node_modules', '.bin', 'baton');
let server: MockLlmServer;
let postgres: TestPostgres;

/** The version of a package installed in this repository. */
function repoVersion(name: string): string {
  const file = join(repoRoot, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/**
 * Every package a `.d.ts` reachable from `entry` imports, with the file importing it: the types a
 * consumer's type-check loads from that entry.
 */
function packagesNamedByTypes(entry: string): Map<string, string> {
  const named = new Map<string, string>();
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const [, specifier] of text.matchAll(
      /(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm,
    )) {
      if (!specifier) continue;
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.d.ts')));
      else named.set(specifier, relative(installed, file));
    }
  };
  visit(entry);
  return named;
}

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}\n${result.stdout}${result.stderr}`);
  }
  return result.stdout;
}

beforeAll(async () => {
  server = await startMockLlmServer({});
  // Starts while the package installs; the consumer opens a PostgresStore on it.
  const postgresStarted = startPostgres();
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), '{ "name": "consumer", "private": true, "type": "module" }\n');
  // As getting-started says: packed into the project (--ignore-scripts: `prepare` would run `npm ci`
  // for the openclaw test host; the build is done), then installed from there by its file name.
  const packed = JSON.parse(
    run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', app], repoRoot),
  ) as { filename: string }[];
  if (packed[0]?.filename !== tarball)
    throw new Error(`npm pack wrote ${packed[0]?.filename}, not ${tarball}`);
  // better-sqlite3 compiles from source for minutes: install without scripts, pinned to the
  // version this repository built, and copy in the compiled addon of that very version. The
  // consumer is a TypeScript program for Node, so it has @types/node, as such a program would.
  const sqliteDir = join(repoRoot, 'node_modules', 'better-sqlite3');
  run(
    'npm',
    [
      'install',
      `./${tarball}`,
      `better-sqlite3@${repoVersion('better-sqlite3')}`,
      `@types/node@${repoVersion('@types/node')}`,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--loglevel=error',
    ],
    app,
  );
  const addonDir = join(app, 'node_modules', 'better-sqlite3', 'build', 'Release');
  mkdirSync(addonDir, { recursive: true });
  copyFileSync(
    join(sqliteDir, 'build', 'Release', 'better_sqlite3.node'),
    join(addonDir, 'better_sqlite3.node'),
  );
  postgres = await postgresStarted;
}, 180_000);

afterAll(async () => {
  await server?.close();
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`the packed package (${manifest.name})`, () => {
  it('is how README and getting-started say to install it without the registry, and `npx baton --help` answers', () => {
    const guide = readFileSync(join(repoRoot, 'docs', 'getting-started.md'), 'utf8');
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    for (const [page, text] of [
      ['docs/getting-started.md', guide],
      ['README.md', readme],
    ] as const) {
      expect(text, page).toContain('npm pack --ignore-scripts --pack-destination ../my-project');
      expect(text, page).toContain(`npm install ./${tarball}`);
      expect(text, page).toContain('npx baton --help');
      expect(text, page).not.toMatch(/npm install baton-steps\b/);
    }
    expect(guide).toContain(`"baton-steps": "file:${tarball}"`);
    expect(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).dependencies[manifest.name]).toBe(
      `file:${tarball}`,
    );
    const help = run('npx', ['baton', '--help'], app);
    expect(help).toContain('Usage: baton [options] [command]');
    expect(help).toContain('Quick start:');
  });

  it("carries the types, both dialects' migrations (once), the plan schema and the skill folder", () => {
    for (const file of [
      'dist/index.d.ts',
      'dist/store.d.ts',
      'dist/store/sqlite/migrations/000001.sql',
      'dist/store/postgres/migrations/000001.sql',
      'schema/plan.schema.json',
      'skill/SKILL.md',
    ]) {
      expect(existsSync(join(installed, file)), file).toBe(true);
    }
    // The migrations are read from dist/ (beside the modules that read them), so src/ is not shipped.
    expect(existsSync(join(installed, 'src'))).toBe(false);
  });

  it("names no database driver's types in its public types, so the drivers' @types are not installed", () => {
    for (const [subpath, entry] of Object.entries(manifest.exports)) {
      const named = packagesNamedByTypes(join(installed, entry.types));
      for (const driver of ['better-sqlite3', 'pg'])
        expect(named.get(driver), `${subpath}: ${driver}`).toBeUndefined();
    }
    // A consumer gets only the package's dependencies: the compile below runs without these.
    for (const types of ['@types/better-sqlite3', '@types/pg'])
      expect(existsSync(join(app, 'node_modules', types)), types).toBe(false);
  });

  it('installs a `baton` bin that runs a plan end to end on SQLite', async () => {
    const plan = writePlan(app, {
      name: 'installed',
      steps: [
        { id: 'fetch', agent: { command: agentCommand('agent-succeed') }, instruction: 'fetch the notes' },
        {
          id: 'summarise',
          dependsOn: ['fetch'],
          model: {
            provider: 'openai',
            model: 'gpt-test',
            baseUrl: server.openaiBaseUrl,
            apiKeyEnv: 'INSTALL_TEST_KEY',
            prompt: 'summarise {{steps.fetch.summary}}',
          },
        },
      ],
    });
    const home = join(app, '.baton');
    const opts = { cli: installedBin, cwd: app, env: { INSTALL_TEST_KEY: 'k' } };
    const ran = await runBaton(['--home', home, 'run', plan, '--id', 'r1'], opts);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const status = await runBaton(['--home', home, 'status', 'r1', '--json'], opts);
    const run = JSON.parse(status.stdout) as { status: string; steps: { stepId: string; status: string }[] };
    expect(run.status).toBe('succeeded');
    expect(run.steps.map((s) => [s.stepId, s.status])).toEqual([
      ['fetch', 'succeeded'],
      ['summarise', 'succeeded'],
    ]);
    expect(server.requests.length).toBeGreaterThan(0);
  });

  it('type-checks and runs a TypeScript consumer importing it by name, with stores from baton-steps/store', () => {
    writeFileSync(
      join(app, 'app.ts'),
      `import { writeFileSync } from 'node:fs';
import { Baton, defineWorkflow, isBatonError, validatePlanObject } from '${manifest.name}';
import { PostgresStore, type RunSummary, SqliteStore, type Store } from '${manifest.name}/store';
import { startMockLlmServer } from '${manifest.name}/testing';

const [home = '.baton', postgresUrl = ''] = process.argv.slice(2);
const wf = defineWorkflow<{ who: string }>({ name: 'hello', inputs: { who: null } })
  .step('greet', async (ctx) => \`hi \${ctx.inputs.who}\`)
  .step('shout', { dependsOn: ['greet'] }, async (ctx) => ctx.results.greet.toUpperCase());
const baton = Baton.open({ home });
const { runId } = await baton.start(wf, { who: 'otter' });
const results = await baton.result(wf, runId);
const shout: string = results.shout;
// @ts-expect-error: the results are typed, and there is no step "missing"
results.missing;
const plan = validatePlanObject({ name: 'plan', steps: [{ id: 'twice', fn: 'twice' }] }, 'plan');
baton.functions.register('twice', (ctx) => \`\${ctx.stepId} \${ctx.stepId}\`);
const started: { runId: string; created: boolean } = await baton.startPlan(plan, {}, { runId: 'p1' });
const planResults = await baton.result(started.runId);
const mock = await startMockLlmServer({});
const mockUp = mock.openaiBaseUrl.startsWith('http://127.0.0.1:');
await mock.close();
await baton.close();
const twice = planResults.twice;

/** A workflow run on a store this program opened: the store creates its schema on open. */
async function runOn(store: Store): Promise<string> {
  const own = Baton.open({ home, store });
  const { runId } = await own.start(wf, { who: store.kind });
  const { shout } = await own.result(wf, runId);
  const runs: RunSummary[] = await own.store.listRuns();
  await own.close();
  return \`\${shout} (\${runs.length} run)\`;
}
const sqlite = await runOn(SqliteStore.open(\`\${home}/own.db\`, { synchronous: 'NORMAL' }));
const postgres = await runOn(await PostgresStore.open(postgresUrl, { schema: 'consumer', poolSize: 2 }));
// What a store throws is the root's BatonError: both entries share one copy of the code.
writeFileSync(\`\${home}/not-a-database\`, 'plain text, not SQLite');
let refused = 'opened';
try {
  SqliteStore.open(\`\${home}/not-a-database\`).close();
} catch (error) {
  refused = isBatonError(error, 'DB_CORRUPT') ? 'DB_CORRUPT' : String(error);
}
console.log(JSON.stringify({ shout, greet: results.greet, twice, mockUp, sqlite, postgres, refused }));
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          skipLibCheck: false,
          outDir: 'out',
        },
        files: ['app.ts'],
      }),
    );
    run(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], app);
    const out = run(process.execPath, [join(app, 'out', 'app.js'), join(app, 'ts-home'), postgres.url], app);
    expect(JSON.parse(out)).toEqual({
      shout: 'HI OTTER',
      greet: 'hi otter',
      twice: 'twice twice',
      mockUp: true,
      sqlite: 'HI SQLITE (1 run)',
      postgres: 'HI POSTGRES (1 run)',
      refused: 'DB_CORRUPT',
    });
  });
});
