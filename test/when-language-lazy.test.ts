/**
 * The CEL interpreter of `when` and `forEach.items` is loaded by the first plan that has one, not
 * with the package: most plans have none, and loading it cost every process about 7 ms. A fresh
 * process imports the built package (package.json `exports`) with a preload that records each
 * time Node's module loader is asked for `@marcbachmann/cel-js`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-cel-lazy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PROBE = `const Module = require('node:module');
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request.startsWith('@marcbachmann/cel-js')) process.stdout.write('cel loaded\\n');
  return load.call(this, request, ...rest);
};`;

function script(): string {
  const entry = pathToFileURL(join(repoRoot, 'dist/package/index.js')).href;
  return `const { validatePlanObject } = await import(${JSON.stringify(entry)});
console.log('imported');
validatePlanObject({ name: 'plain', steps: [{ id: 'a', fn: 'f' }, { id: 'b', fn: 'f', dependsOn: ['a'] }] }, 'plain');
console.log('plain plan validated');
validatePlanObject({ name: 'cond', steps: [{ id: 'a', fn: 'f' }, { id: 'b', fn: 'f', dependsOn: ['a'], when: 'steps.a.result == "x"' }] }, 'cond');
validatePlanObject({ name: 'cond2', steps: [{ id: 'a', fn: 'f' }, { id: 'b', fn: 'f', dependsOn: ['a'], when: 'steps.a.status == "succeeded"' }] }, 'cond2');
console.log('plans with when validated');`;
}

describe('the when language is loaded on demand', () => {
  it('is not loaded by importing the package or by a plan without when, and once by the first plan with one', () => {
    const probe = join(dir, 'probe.cjs');
    writeFileSync(probe, PROBE);
    const child = spawnSync(process.execPath, ['--require', probe, '--input-type=module', '-e', script()], {
      encoding: 'utf8',
    });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim().split('\n')).toEqual([
      'imported',
      'plain plan validated',
      'cel loaded',
      'plans with when validated',
    ]);
  });
});
