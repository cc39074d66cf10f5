/**
 * A step's `requiredOutputs` are paths relative to the run's workspace. After the agent exits 0 each
 * must exist inside the workspace once symlinks are resolved, and is then recorded as an artifact
 * (path, size, sha256).
 *
 * Decisions:
 * - The root is the workspace's realpath, so a workspace reached through a symlink (macOS `/tmp`) works.
 * - `absPath` of a passing check is the declared location under that root (not the symlink target),
 *   so artifacts keep the names the plan declared; its realpath was checked to be inside the root.
 * - A dangling symlink, a symlink loop and a missing workspace all count as `missing`.
 * - A directory counts as an existing output; only regular files are hashed, so a directory (or any
 *   other non-regular file, such as a FIFO that would block a reader) is recorded with size 0 and
 *   sha256 ''.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { BatonError } from '../core/errors.js';

type OutputProblem = 'missing' | 'absolute' | 'escapes' | 'symlink_escape' | 'invalid';

type OutputCheck =
  | { ok: true; relPath: string; absPath: string }
  | { ok: false; relPath: string; problem: OutputProblem; message: string };

interface ArtifactRecord {
  /** Relative to the workspace, with forward slashes. */
  path: string;
  /** Bytes; 0 for a directory. */
  size: number;
  /** Hex sha256 of the content; '' for a directory. */
  sha256: string;
}

type LexicalProblem = { problem: 'absolute' | 'escapes' | 'invalid'; text: string };

/** Errors that mean "there is nothing at this path". */
const NOT_THERE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP']);

/**
 * Validation without touching the disk, for plan loading: refuses absolute paths, '..' escapes,
 * NUL, empty. Returns null if fine, else a message such as `"../x" escapes the workspace`, which the
 * caller prefixes with the field's location.
 */
export function lexicalPathProblem(relPath: string): string | null {
  const problem = classifyLexically(relPath);
  return problem === null ? null : `${quote(relPath)} ${problem.text}`;
}

/** Pure-ish check of one declared output (uses fs.realpath). */
export async function checkOutputPath(workspace: string, relPath: string): Promise<OutputCheck> {
  const refuse = (problem: OutputProblem, text: string): OutputCheck => ({
    ok: false,
    relPath,
    problem,
    message: `requiredOutputs ${quote(relPath)} ${text}`,
  });
  const lexical = classifyLexically(relPath);
  if (lexical !== null) {
    const where = lexical.problem === 'invalid' ? '' : ` ${workspace}`;
    return refuse(lexical.problem, `${lexical.text}${where}`);
  }
  const root = await realpathOrNull(workspace);
  if (root === null) return refuse('missing', `cannot exist: the workspace ${workspace} does not exist`);
  const absPath = path.join(root, path.normalize(relPath));
  const real = await realpathOrNull(absPath);
  if (real === null) return refuse('missing', `does not exist in the workspace ${workspace}`);
  if (real === root) return refuse('invalid', `is the workspace ${workspace} itself, not an output in it`);
  if (!isInside(root, real)) {
    return refuse(
      'symlink_escape',
      `resolves through a symlink to ${real}, outside the workspace ${workspace}`,
    );
  }
  return { ok: true, relPath, absPath };
}

/** Streams the file to compute sha256 (must not read a huge file into memory at once). */
export async function describeArtifact(workspace: string, absPath: string): Promise<ArtifactRecord> {
  const root = await realpath(workspace);
  const relative = [root, path.resolve(workspace)]
    .map((base) => path.relative(base, path.resolve(absPath)))
    .find((candidate) => candidate !== '' && isRelativeInside(candidate));
  const real = await realpath(absPath);
  if (relative === undefined || !isInside(root, real)) {
    throw new BatonError('PATH_ESCAPE', `artifact ${absPath} is not inside the workspace ${workspace}`);
  }
  const record = relative.split(path.sep).join('/');
  const info = await stat(real);
  if (!info.isFile()) return { path: record, size: 0, sha256: '' };
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(real)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { path: record, size, sha256: hash.digest('hex') };
}

function classifyLexically(relPath: string): LexicalProblem | null {
  if (typeof relPath !== 'string' || relPath === '') return { problem: 'invalid', text: 'is empty' };
  if (relPath.includes('\0')) return { problem: 'invalid', text: 'contains a NUL byte' };
  if (path.posix.isAbsolute(relPath) || path.win32.isAbsolute(relPath)) {
    return { problem: 'absolute', text: 'is an absolute path; declare it relative to the workspace' };
  }
  const normalized = path.posix.normalize(relPath);
  if (normalized === '..' || normalized.startsWith('../')) {
    return { problem: 'escapes', text: 'escapes the workspace' };
  }
  if (normalized === '.' || normalized === './') {
    return { problem: 'invalid', text: 'is the workspace itself, not an output in it' };
  }
  return null;
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative !== '' && isRelativeInside(relative);
}

function isRelativeInside(relative: string): boolean {
  return relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

async function realpathOrNull(file: string): Promise<string | null> {
  try {
    return await realpath(file);
  } catch (error) {
    if (NOT_THERE.has((error as NodeJS.ErrnoException).code ?? '')) return null;
    throw error;
  }
}

function quote(text: string): string {
  return JSON.stringify(text);
}
