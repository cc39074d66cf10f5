/**
 * Where the kernel (execve) and execvp will find a program: the file-system half of the command
 * policy. Paths are joined and resolved by the kernel, never normalized as text.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Where spawn (libuv) looks for a program when the environment has no PATH. */
export const DEFAULT_EXEC_PATH = '/usr/bin:/bin';
/** Where glibc's execvp (what env and the other wrappers call) looks without a PATH. */
export const EXECVP_DEFAULT_PATH = '/bin:/usr/bin';

/**
 * The file exec would run for `program` (PATH searched as execvp does), or null when none is found.
 * Paths are joined, never normalized: the kernel resolves `link/..` to the parent of the link's
 * target, where `path.resolve` would drop both as text and name another file.
 */
export function locateProgram(
  program: string,
  { cwd, pathEnv }: { cwd: string; pathEnv: string },
): string | null {
  if (program.includes('/')) return tidy(program.startsWith('/') ? program : joinFrom(cwd, program));
  for (const dir of pathEnv.split(path.delimiter)) {
    const folder = dir === '' ? cwd : dir.startsWith('/') ? dir : joinPath(cwd, dir);
    const candidate = joinPath(folder, program);
    if (isExecutableFile(candidate)) return tidy(candidate);
  }
  return null;
}

/** The same file named by its folder's real path (no `..`, no folder links); the file's own name kept. */
function tidy(file: string): string {
  const slash = file.lastIndexOf('/');
  const folder = realPathOrNull(slash === 0 ? '/' : file.slice(0, slash));
  return folder === null ? file : joinPath(folder, file.slice(slash + 1));
}

/**
 * `relative` seen from `cwd` as the kernel will see it once the child runs there: joined as text
 * (the kernel resolves each `..` after the links before it), or, while `cwd` does not exist yet,
 * resolved lexically (a folder to be created holds no links).
 */
export function joinFrom(cwd: string, relative: string): string {
  return fs.existsSync(cwd) ? joinPath(cwd, relative) : path.resolve(cwd, relative);
}

export function joinPath(folder: string, name: string): string {
  return folder.endsWith('/') ? `${folder}${name}` : `${folder}/${name}`;
}

function isExecutableFile(file: string): boolean {
  try {
    // Most PATH entries do not hold the program: no exception for those (building one costs more).
    if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function realPathOrNull(file: string): string | null {
  try {
    // realpath(3) in one call, where the JavaScript version lstat()s each component.
    return fs.realpathSync.native(file);
  } catch {
    return null;
  }
}

/**
 * The real path of a folder that may not exist yet (a workspace Baton creates after its checks):
 * its deepest existing ancestor resolved as the kernel would, and the rest appended. A folder that
 * does not exist holds no links, so `..` below it means what it says.
 */
export function realFolderOf(folder: string): string {
  const absolute = path.resolve(folder);
  const missing: string[] = [];
  for (let current = absolute; ; current = path.dirname(current)) {
    const real = realPathOrNull(current);
    if (real !== null) return path.resolve(real, ...missing.reverse());
    if (path.dirname(current) === current) return absolute;
    missing.push(path.basename(current));
  }
}
