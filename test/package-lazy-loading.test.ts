/**
 * `import` of the built package loads none of the heavy dependencies a run may never need (the
 * model SDKs, OpenTelemetry, ajv, the YAML parser, zod's 95 modules, pg), nor a database driver:
 * a real Node process imports the package's entries, the root and `baton-steps/store` (as its
 * `exports` map names them), with a loader hook recording every ES module and `require.cache`
 * every CommonJS one. A workflow run on SQLite loads none of them either, and a model step against
 * the mock provider, on a store opened from `baton-steps/store`, still works, loading its SDK on
 * first call.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/cli.js';

const HEAVY = ['openai', '@anthropic-ai/sdk', '@opentelemetry/api', 'ajv', 'yaml', 'zod', 'pg'];

const dir = mkdtempSync(join(tmpdir(), 'baton-lazy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  exports: { '.': { default: string }; './store': { default: string }; './testing': { default: string } };
};
const entry = pathToFileURL(join(repoRoot, manifest.exports['.'].default)).href;
const storeEntry = pathToFileURL(join(repoRoot, manifest.exports['./store'].default)).href;
const testingEntry = pathToFileURL(join(repoRoot, manifest.exports['./testing'].default)).href;

/** Appends the URL of every ES module Node loads to $LOAD_LOG (the hook runs on its own thread). */
const HOOKS = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.LOAD_LOG, url + '\\n');
  return next(url, context);
}`;

const CHILD = `import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const packagesLoaded = () => {
  const files = [...readFileSync(process.env.LOAD_LOG, 'utf8').split('\\n'), ...Object.keys(createRequire(import.meta.url).cache)];
  const names = files.map((f) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(f)?.[1]).filter(Boolean);
  return [...new Set(names)].sort();
};
const report = {};
const pkg = await import(${JSON.stringify(entry)});
const stores = await import(${JSON.stringify(storeEntry)});
report.afterImport = packagesLoaded();

const home = process.argv[2];
const wf = pkg.defineWorkflow({ name: 'lazy', inputs: { who: null } })
  .step('greet', async (ctx) => 'hi ' + ctx.inputs.who)
  .step('shout', { dependsOn: ['greet'] }, async (ctx) => ctx.results.greet.toUpperCase());
const baton = pkg.Baton.open({ home });
const { runId } = await baton.start(wf, { who: 'otter' });
report.workflow = await baton.result(wf, runId);
report.afterWorkflow = packagesLoaded();

const testing = await import(${JSON.stringify(testingEntry)});
const server = await testing.startMockLlmServer({});
const plan = pkg.validatePlanObject({ name: 'model', steps: [{ id: 'ask', model: {
  provider: 'openai', model: 'gpt-test', baseUrl: server.openaiBaseUrl, apiKeyEnv: 'LAZY_TEST_KEY', prompt: 'hello' } }] }, 'model.json');
const modelBaton = pkg.Baton.open({
  home: home + '/model',
  store: stores.SqliteStore.open(home + '/model.db'),
  model: { env: { LAZY_TEST_KEY: 'k' } },
});
await modelBaton.startPlan(plan, {}, { runId: 'm1' });
await modelBaton.result('m1');
report.modelRun = (await modelBaton.store.getRun('m1')).status;
report.afterModel = packagesLoaded();
await modelBaton.close();
await baton.close();
await server.close();
process.stdout.write(JSON.stringify(report));
`;

describe('the built package', () => {
  it('loads no model SDK, OpenTelemetry, ajv, yaml, zod, pg or SQLite until a run needs one', () => {
    const hooks = join(dir, 'hooks.mjs');
    const register = join(dir, 'register.mjs');
    const child = join(dir, 'child.mjs');
    const log = join(dir, 'loaded.txt');
    writeFileSync(hooks, HOOKS);
    writeFileSync(
      register,
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    writeFileSync(child, CHILD);
    writeFileSync(log, '');
    const result = spawnSync(process.execPath, ['--import', register, child, join(dir, 'home')], {
      encoding: 'utf8',
      env: { ...process.env, LOAD_LOG: log },
      timeout: 60_000,
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout) as Record<string, unknown> & {
      afterImport: string[];
      afterWorkflow: string[];
      afterModel: string[];
    };
    expect(report.afterImport.filter((name) => HEAVY.includes(name))).toEqual([]);
    // better-sqlite3 loads with the first store opened (the workflow's), not with an import.
    expect(report.afterImport).not.toContain('better-sqlite3');
    expect(report.afterWorkflow).toContain('better-sqlite3');
    expect(report.workflow).toEqual({ greet: 'hi otter', shout: 'HI OTTER' });
    expect(report.afterWorkflow.filter((name) => HEAVY.includes(name))).toEqual([]);
    // The model step ran through the official SDK, loaded by its first call (which also shows
    // that the hook sees the packages this test says are absent).
    expect(report.modelRun).toBe('succeeded');
    expect(report.afterModel).toContain('openai');
  });
});
