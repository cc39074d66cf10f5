/**
 * What `npm pack` makes installs into an empty folder and works there, by its npm name: the
 * `baton` bin runs a YAML plan (an agent step, then a model step against the mock provider) on
 * SQLite, and a TypeScript ES module consumer type-checks against the installed types (strict,
 * without skipLibCheck) and runs a workflow and a plan with an fn step. Nothing resolves from
 * this repository: the folder is under os.tmpdir(), and the dependencies come from the npm
 * registry (or its local cache).
 * Needs the build (`npm run build`) and access to the npm registry or a warm npm cache.
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
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockLlmServer } from '../src/testing/mock-llm/server.js';
import type { MockLlmServer } from '../src/testing/mock-llm/types.js';
import { agentCommand, repoRoot, runBaton, writePlan } from './helpers/cli.js';

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string };
const dir = mkdtempSync(join(tmpdir(), 'baton-install-'));
const app = join(dir, 'app');
const installedBin = join(app, 'node_modules', '.bin', 'baton');
let server: MockLlmServer;

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}\n${result.stdout}${result.stderr}`);
  }
  return result.stdout;
}

beforeAll(async () => {
  server = await startMockLlmServer({});
  // --ignore-scripts: `prepare` would run `npm ci` for the openclaw test host; the build is done.
  const packed = JSON.parse(
    run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], repoRoot),
  ) as { filename: string }[];
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), '{ "name": "consumer", "private": true, "type": "module" }\n');
  // better-sqlite3 compiles from source for minutes: install without scripts, pinned to the
  // version this repository built, and copy in the compiled addon of that very version.
  const sqliteDir = join(repoRoot, 'node_modules', 'better-sqlite3');
  const sqliteVersion = (
    JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8')) as { version: string }
  ).version;
  run(
    'npm',
    [
      'install',
      join(dir, packed[0]!.filename),
      `better-sqlite3@${sqliteVersion}`,
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
}, 180_000);

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe(`the packed package (${manifest.name})`, () => {
  it("carries the types, both dialects' migrations (once), the plan schema and the skill folder", () => {
    const installed = join(app, 'node_modules', manifest.name);
    for (const file of [
      'dist/index.d.ts',
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

  it('type-checks and runs a TypeScript consumer importing it by name', () => {
    writeFileSync(
      join(app, 'app.ts'),
      `import { Baton, defineWorkflow, PostgresStore, SqliteStore, validatePlanObject } from '${manifest.name}';
import { startMockLlmServer } from '${manifest.name}/testing';

const wf = defineWorkflow<{ who: string }>({ name: 'hello', inputs: { who: null } })
  .step('greet', async (ctx) => \`hi \${ctx.inputs.who}\`)
  .step('shout', { dependsOn: ['greet'] }, async (ctx) => ctx.results.greet.toUpperCase());
const baton = Baton.open({ home: process.argv[2] ?? '.baton' });
const { runId } = await baton.start(wf, { who: 'otter' });
const results = await baton.result(wf, runId);
const shout: string = results.shout;
// @ts-expect-error: the results are typed, and there is no step "missing"
results.missing;
const plan = validatePlanObject({ name: 'plan', steps: [{ id: 'twice', fn: 'twice' }] }, 'plan');
baton.functions.register('twice', (ctx) => \`\${ctx.stepId} \${ctx.stepId}\`);
const started: { runId: string; created: boolean } = await baton.startPlan(plan, {}, { runId: 'p1' });
const planResults = await baton.result(started.runId);
const stores: [typeof SqliteStore.open, typeof PostgresStore.open] = [SqliteStore.open, PostgresStore.open];
const mock = await startMockLlmServer({});
const mockUp = mock.openaiBaseUrl.startsWith('http://127.0.0.1:');
await mock.close();
await baton.close();
const twice = planResults.twice;
console.log(JSON.stringify({ shout, greet: results.greet, twice, stores: stores.length, mockUp }));
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
    const out = run(process.execPath, [join(app, 'out', 'app.js'), join(app, 'ts-home')], app);
    expect(JSON.parse(out)).toEqual({
      shout: 'HI OTTER',
      greet: 'hi otter',
      twice: 'twice twice',
      stores: 2,
      mockUp: true,
    });
  });
});
