/** Reading an agent step's result file: the limits a result file is held to, on real files. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RESULT_FILE_MAX_BYTES, readResultFile } from '../src/executors/result-file.js';
import { removeTempDirs, tempDir } from './helpers/cli.js';

afterAll(() => removeTempDirs());

function workspace(files: Record<string, string | Buffer> = {}): string {
  const dir = join(tempDir('baton-result-file-'), 'ws');
  mkdirSync(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

describe('readResultFile', () => {
  it('reads the JSON value, a link inside the workspace included', async () => {
    const dir = workspace({ 'real.json': '\uFEFF{"passed": true, "pages": [1, 2]}' });
    symlinkSync(join(dir, 'real.json'), join(dir, 'result.json'));
    expect(await readResultFile(dir, 'result.json', undefined)).toEqual({
      ok: true,
      value: { passed: true, pages: [1, 2] },
    });
  });

  it('refuses a file over 1 MiB, saying so', async () => {
    const dir = workspace({ 'result.json': `"${'x'.repeat(RESULT_FILE_MAX_BYTES)}"` });
    expect(await readResultFile(dir, 'result.json', undefined)).toEqual({
      ok: false,
      message: expect.stringMatching(
        /^resultFile result\.json is 1048578 bytes, over the limit of 1 MiB \(1048576 bytes\): write a smaller result/,
      ),
    });
  });

  it('refuses repeated keys and deep nesting with their position, and text that is not UTF-8', async () => {
    const dir = workspace({
      'dup.json': '{\n  "a": 1,\n  "a": 2\n}',
      'deep.json': `${'['.repeat(65)}${']'.repeat(65)}`,
      'latin1.json': Buffer.from([0x22, 0xe9, 0x22]),
    });
    expect(await readResultFile(dir, 'dup.json', undefined)).toEqual({
      ok: false,
      message:
        'resultFile dup.json:3:3: duplicate key "a" (first at line 2, column 3): a key may appear once per object',
    });
    expect(await readResultFile(dir, 'deep.json', undefined)).toMatchObject({
      ok: false,
      message: 'resultFile deep.json:1:65: nesting is deeper than 64 levels (the limit)',
    });
    expect(await readResultFile(dir, 'latin1.json', undefined)).toEqual({
      ok: false,
      message: 'resultFile latin1.json is not UTF-8 text: write the result as JSON in UTF-8',
    });
  });

  it('refuses a FIFO without blocking on it, and a directory', async () => {
    const dir = workspace();
    execFileSync('mkfifo', [join(dir, 'result.json')]);
    mkdirSync(join(dir, 'folder'));
    for (const name of ['result.json', 'folder']) {
      expect(await readResultFile(dir, name, undefined)).toEqual({
        ok: false,
        message: `resultFile ${name} is not a regular file: write the JSON result to a file`,
      });
    }
  });

  it('lists every schema violation with its JSON path', async () => {
    const dir = workspace({ 'result.json': '{"score": "high", "extra": 1, "pages": [{"url": 3}]}' });
    const schema = {
      type: 'object',
      required: ['passed'],
      additionalProperties: false,
      properties: {
        score: { type: 'number' },
        pages: { type: 'array', items: { type: 'object', properties: { url: { type: 'string' } } } },
      },
    };
    expect(await readResultFile(dir, 'result.json', schema)).toEqual({
      ok: false,
      message:
        'resultFile result.json does not match the step\'s resultSchema: /: missing required property "passed"; /: property "extra" is not allowed; /score: must be number; /pages/0/url: must be string',
    });
  });
});
