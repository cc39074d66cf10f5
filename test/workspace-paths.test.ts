import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { checkOutputPath, describeArtifact, lexicalPathProblem } from '../src/executors/workspace-paths.js';

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

describe('lexicalPathProblem', () => {
  it.each([
    'report.md',
    'out/report.md',
    './out/report.md',
    'a/../b.txt',
    'out/',
    '..hidden',
    'a..b',
  ])('accepts %j', (relPath) => {
    expect(lexicalPathProblem(relPath)).toBeNull();
  });

  it.each([
    ['../secret.txt', '"../secret.txt" escapes the workspace'],
    ['a/../../x', '"a/../../x" escapes the workspace'],
    ['..', '".." escapes the workspace'],
    ['/etc/passwd', '"/etc/passwd" is an absolute path; declare it relative to the workspace'],
    ['C:\\Users\\x', '"C:\\\\Users\\\\x" is an absolute path; declare it relative to the workspace'],
    ['', '"" is empty'],
    ['a\0b', '"a\\u0000b" contains a NUL byte'],
    ['.', '"." is the workspace itself, not an output in it'],
    ['a/..', '"a/.." is the workspace itself, not an output in it'],
  ])('refuses %j', (relPath, message) => {
    expect(lexicalPathProblem(relPath)).toBe(message);
  });
});

describe('checkOutputPath and describeArtifact on a real workspace', () => {
  let base: string;
  let ws: string;
  let outside: string;

  beforeAll(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-ws-')));
    ws = path.join(base, 'ws');
    outside = path.join(base, 'outside');
    fs.mkdirSync(path.join(ws, 'out'), { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(ws, 'out', 'report.md'), '# report\n');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    fs.symlinkSync(path.join(ws, 'out', 'report.md'), path.join(ws, 'link.md'));
    fs.symlinkSync('out', path.join(ws, 'out-link'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'leak.txt'));
    fs.symlinkSync(outside, path.join(ws, 'ext'));
    fs.symlinkSync(path.join(ws, 'nowhere.txt'), path.join(ws, 'dangling.txt'));
    fs.symlinkSync('.', path.join(ws, 'self'));
    fs.symlinkSync('loop-b', path.join(ws, 'loop-a'));
    fs.symlinkSync('loop-a', path.join(ws, 'loop-b'));
    fs.symlinkSync(ws, path.join(base, 'ws-link'));
  });
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

  it('accepts a file inside the workspace', async () => {
    expect(await checkOutputPath(ws, 'out/report.md')).toEqual({
      ok: true,
      relPath: 'out/report.md',
      absPath: path.join(ws, 'out', 'report.md'),
    });
  });

  it('accepts symlinks that stay inside, keeping the declared name', async () => {
    expect(await checkOutputPath(ws, 'link.md')).toMatchObject({
      ok: true,
      absPath: path.join(ws, 'link.md'),
    });
    const viaDir = await checkOutputPath(ws, 'out-link/report.md');
    expect(viaDir).toMatchObject({ ok: true, absPath: path.join(ws, 'out-link', 'report.md') });
    if (!viaDir.ok) return;
    expect(await describeArtifact(ws, viaDir.absPath)).toEqual({
      path: 'out-link/report.md',
      size: 9,
      sha256: sha256('# report\n'),
    });
  });

  it('refuses a symlink pointing outside', async () => {
    const check = await checkOutputPath(ws, 'leak.txt');
    expect(check).toEqual({
      ok: false,
      relPath: 'leak.txt',
      problem: 'symlink_escape',
      message: `requiredOutputs "leak.txt" resolves through a symlink to ${path.join(outside, 'secret.txt')}, outside the workspace ${ws}`,
    });
  });

  it('refuses a path under a parent directory symlink pointing outside', async () => {
    expect(await checkOutputPath(ws, 'ext/secret.txt')).toMatchObject({
      ok: false,
      problem: 'symlink_escape',
    });
  });

  it('refuses lexical escapes, naming the path and the workspace', async () => {
    expect(await checkOutputPath(ws, '../secret.txt')).toEqual({
      ok: false,
      relPath: '../secret.txt',
      problem: 'escapes',
      message: `requiredOutputs "../secret.txt" escapes the workspace ${ws}`,
    });
    expect(await checkOutputPath(ws, 'a/../../x')).toMatchObject({ ok: false, problem: 'escapes' });
  });

  it('refuses absolute paths even when they exist', async () => {
    expect(await checkOutputPath(ws, '/etc/passwd')).toMatchObject({ ok: false, problem: 'absolute' });
    expect(await checkOutputPath(ws, path.join(ws, 'out', 'report.md'))).toMatchObject({
      ok: false,
      problem: 'absolute',
    });
  });

  it.each([
    ['missing.txt', 'missing'],
    ['out/missing/deeper.txt', 'missing'],
    ['out/report.md/child', 'missing'],
    ['dangling.txt', 'missing'],
    ['loop-a', 'missing'],
    ['self', 'invalid'],
    ['.', 'invalid'],
    ['', 'invalid'],
    ['a\0b', 'invalid'],
  ])('reports %j as %s', async (relPath, problem) => {
    const check = await checkOutputPath(ws, relPath);
    expect(check).toMatchObject({ ok: false, relPath, problem });
    if (!check.ok) expect(check.message).toContain(`requiredOutputs ${JSON.stringify(relPath)}`);
  });

  it('reports outputs of a missing workspace as missing', async () => {
    expect(await checkOutputPath(path.join(base, 'gone'), 'a.txt')).toMatchObject({
      ok: false,
      problem: 'missing',
    });
  });

  it('accepts a directory output and records it with size 0 and no hash', async () => {
    const check = await checkOutputPath(ws, 'out');
    expect(check).toMatchObject({ ok: true });
    if (!check.ok) return;
    expect(await describeArtifact(ws, check.absPath)).toEqual({ path: 'out', size: 0, sha256: '' });
  });

  it('works through a symlinked workspace path', async () => {
    const wsLink = path.join(base, 'ws-link');
    const check = await checkOutputPath(wsLink, 'out/report.md');
    expect(check).toMatchObject({ ok: true, absPath: path.join(ws, 'out', 'report.md') });
    expect(await describeArtifact(wsLink, path.join(wsLink, 'out', 'report.md'))).toMatchObject({
      path: 'out/report.md',
    });
  });

  it('hashes a 5 MB file the same as hashing the whole buffer', async () => {
    const data = randomBytes(5 * 1024 * 1024);
    fs.writeFileSync(path.join(ws, 'out', 'big.bin'), data);
    const check = await checkOutputPath(ws, 'out/big.bin');
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(await describeArtifact(ws, check.absPath)).toEqual({
      path: 'out/big.bin',
      size: data.length,
      sha256: sha256(data),
    });
  });

  it('refuses to describe a file outside the workspace', async () => {
    for (const absPath of [path.join(outside, 'secret.txt'), path.join(ws, 'leak.txt'), ws]) {
      const error = await describeArtifact(ws, absPath).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isBatonError(error, 'PATH_ESCAPE'), absPath).toBe(true);
    }
  });
});
