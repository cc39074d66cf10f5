/**
 * The libraries the core decides with but most processes never need are loaded by their first use,
 * not with the package (store/core-libraries.ts): the CEL interpreter of `when` and
 * `forEach.items` (about 7 ms of every process when the core imported it) and croner, the cron
 * expressions of schedules (about 6 ms). A fresh process imports the built package (package.json
 * `exports`) with a preload that records each time Node's module loader is asked for either.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-lazy-libs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PROBE = `const Module = require('node:module');
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request.startsWith('@marcbachmann/cel-js')) process.stdout.write('cel loaded\\n');
  if (request === 'croner') process.stdout.write('croner loaded\\n');
  return load.call(this, request, ...rest);
};`;

function script(home: string): string {
  const entry = pathToFileURL(join(repoRoot, 'dist/package/index.js')).href;
  return `const { Baton, defineWorkflow, validatePlanObject } = await import(${JSON.stringify(entry)});
console.log('imported');
validatePlanObject({ name: 'plain', steps: [{ id: 'a', fn: 'f' }, { id: 'b', fn: 'f', dependsOn: ['a'] }] }, 'plain');
console.log('plain plan validated');
validatePlanObject({ name: 'cond', steps: [{ id: 'a', fn: 'f' }, { id: 'b', fn: 'f', dependsOn: ['a'], when: 'steps.a.result == "x"' }] }, 'cond');
validatePlanObject({ name: 'cond2', steps: [{ id: 'a', fn: 'f' }, { id: 'b', fn: 'f', dependsOn: ['a'], when: 'steps.a.status == "succeeded"' }] }, 'cond2');
console.log('plans with when validated');
const baton = Baton.open({ home: ${JSON.stringify(home)} });
const wf = defineWorkflow({ name: 'daily' }).step('a', () => 'done');
baton.register(wf);
await baton.run(wf, {});
console.log('a run ran, schedules listed: ' + (await baton.schedules.list()).length);
await baton.schedule('daily', wf, { cron: '0 8 * * *', tz: 'Asia/Shanghai' });
await baton.schedule('hourly', wf, { cron: '0 * * * *' });
console.log('schedules added: ' + (await baton.schedules.list()).length);
await baton.close();`;
}

describe('libraries the core needs rarely are loaded on demand', () => {
  it('loads neither by importing the package, a plan without when or a run, and each once at its first use', () => {
    const probe = join(dir, 'probe.cjs');
    writeFileSync(probe, PROBE);
    const child = spawnSync(
      process.execPath,
      ['--require', probe, '--input-type=module', '-e', script(join(dir, 'home'))],
      { encoding: 'utf8' },
    );
    expect(child.stderr).toBe('');
    expect(child.stdout.trim().split('\n')).toEqual([
      'imported',
      'plain plan validated',
      'cel loaded',
      'plans with when validated',
      'a run ran, schedules listed: 0',
      'croner loaded',
      'schedules added: 2',
    ]);
  });

  it('is not imported statically by any module the package or the CLI loads (an ES import would load it at start)', () => {
    const statically = /(?:from\s*|import\s*)["'](?:croner|@marcbachmann\/cel-js)["']/;
    const bundles = [
      ...readdirSync(join(repoRoot, 'dist/package')).map((f) => join('dist/package', f)),
      'dist/cli/baton.cjs',
    ].filter((f) => f.endsWith('.js') || f.endsWith('.cjs'));
    const importing = bundles.filter((f) => statically.test(readFileSync(join(repoRoot, f), 'utf8')));
    expect(importing).toEqual([]);
  });
});
