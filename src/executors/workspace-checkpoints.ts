import { execFile, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { BatonError } from '../core/errors.js';

/**
 * Workspace checkpoints (`checkpoint: workspace`): the files of a run's workspace recorded as a git
 * tree in a private object store under the Baton home (`<home>/checkpoints.git`), never the user's
 * own repository, through the git program (measured: an unchanged 10,000-file tree is a stat walk
 * against a per-run index, tens of ms). Each tree is kept reachable by a ref under
 * `refs/baton/<run, hex>/` so that `baton gc` can drop a run's trees and nothing else. The user's
 * configuration, attributes and filters are ignored: a checkpoint holds the bytes as they are.
 */

const run = promisify(execFile);

/** Where a run's workspace is checkpointed, and what is left out. */
export interface CheckpointPlace {
  home: string;
  runId: string;
  workspace: string;
  /** gitignore-like patterns (`node_modules/`, `*.log`, `/build`), relative to the workspace. */
  exclude: readonly string[];
  /** Folders never recorded (the Baton home, a database kept beside it) when inside the workspace. */
  hidden?: readonly string[];
}

/** One file a step added, changed or removed. */
export interface FileChange {
  path: string;
  change: 'added' | 'changed' | 'removed';
}

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** The private object store of a home, made on first use (0700). */
export function checkpointRepo(home: string): string {
  return join(home, 'checkpoints.git');
}

/**
 * Baton's own files beside the repository, under `<home>/checkpoints/`: per run a folder (its index
 * and the tree each step's latest attempt left), `tmp/` for the index copies of checkpoints being
 * made, `journals/` for restores under way (runtime/workspace-restore.ts).
 */
export function checkpointFiles(home: string): { runs: string; tmp: string; journals: string } {
  const root = join(home, 'checkpoints');
  return { runs: join(root, 'runs'), tmp: join(root, 'tmp'), journals: join(root, 'journals') };
}

/** A run's (or step's) id as a file or ref name: hex, so that no id can name a path of its own. */
export function checkpointKey(id: string): string {
  return Buffer.from(id).toString('hex');
}

function runFolder(home: string, runId: string): string {
  return join(checkpointFiles(home).runs, checkpointKey(runId));
}

/** The run's own index file: the stat cache that makes an unchanged workspace cheap to record again. */
function runIndex(home: string, runId: string): string {
  return join(runFolder(home, runId), 'index');
}

function runRefs(runId: string): string {
  return `refs/baton/${checkpointKey(runId)}/`;
}

/** git with only our repository's settings: no user or system config, attributes or filters. */
function gitEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_DIR: checkpointRepo(home),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    LC_ALL: 'C',
    ...extra,
  };
}

async function git(
  home: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; maxBuffer?: number; benign?: RegExp } = {},
): Promise<string> {
  try {
    const { stdout } = await run('git', ['-c', 'core.quotePath=false', ...args], {
      env: gitEnv(home, options.env),
      ...(options.cwd ? { cwd: options.cwd } : {}),
      maxBuffer: options.maxBuffer ?? 64 * 1024 * 1024,
      encoding: 'utf8',
    });
    return stdout;
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
    // Errors git reports and goes on after (`add --ignore-errors`): the command did its work.
    const errors = (failure.stderr ?? '').split('\n').filter((line) => /^(error|fatal):/.test(line));
    const { benign } = options;
    if (
      benign &&
      errors.length > 0 &&
      errors.every((line) => benign.test(line) || line === 'fatal: adding files failed')
    )
      return failure.stdout ?? '';
    if (failure.code === 'ENOENT') {
      throw new BatonError(
        'INVALID_ARGUMENT',
        'checkpoint: workspace needs the git program, and none is on PATH: install git, or set checkpoint: none',
      );
    }
    const said = (failure.stderr ?? failure.message).trim().split('\n').slice(-3).join('; ');
    throw new BatonError('INVALID_ARGUMENT', `checkpoint: git ${args[0]} failed: ${said.slice(0, 500)}`);
  }
}

/** Makes the private repository once: bare, 0700, attributes that keep every byte as it is. */
async function ensureRepo(home: string): Promise<void> {
  const repo = checkpointRepo(home);
  if (existsSync(join(repo, 'info', 'attributes'))) return;
  mkdirSync(repo, { recursive: true, mode: 0o700 });
  chmodSync(repo, 0o700);
  await git(home, ['init', '--bare', '--quiet']);
  // Checkpoints are written on the way to every agent attempt: fast zlib over small objects.
  await git(home, ['config', 'core.looseCompression', '1']);
  mkdirSync(join(repo, 'info'), { recursive: true });
  // Highest precedence: a workspace's own .gitattributes cannot turn on line-ending conversion,
  // filters or encodings, so a restore writes back exactly what was recorded.
  writeFileSync(join(repo, 'info', 'attributes'), '* -text -eol -filter -ident -working-tree-encoding\n');
  for (const folder of Object.values(checkpointFiles(home)))
    mkdirSync(folder, { recursive: true, mode: 0o700 });
}

/** The pathspecs that leave out `exclude` and the hidden folders inside the workspace. */
export function excludePathspecs(place: CheckpointPlace): string[] {
  const specs: string[] = [];
  for (const raw of place.exclude) {
    const dirOnly = raw.endsWith('/');
    const pattern = raw.replace(/^\/+/, '').replace(/\/+$/, '');
    if (pattern === '') continue;
    const anchored = raw.startsWith('/') || pattern.includes('/');
    const base = anchored ? pattern : `**/${pattern}`;
    specs.push(`:(exclude,glob)${base}/**`);
    if (!dirOnly) specs.push(`:(exclude,glob)${base}`);
  }
  for (const folder of place.hidden ?? []) {
    const rel = relative(place.workspace, folder);
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) continue;
    specs.push(`:(exclude,literal)${rel.split(sep).join('/')}`);
  }
  return specs;
}

/**
 * Runs `work` with a private copy of the run's index, then keeps the copy as the run's index: two
 * steps of a run checkpointing at once never meet on a lock (the later copy wins; it is a cache).
 */
async function withRunIndex<T>(place: CheckpointPlace, work: (index: string) => Promise<T>): Promise<T> {
  const index = runIndex(place.home, place.runId);
  mkdirSync(runFolder(place.home, place.runId), { recursive: true, mode: 0o700 });
  const own = join(
    checkpointFiles(place.home).tmp,
    `${checkpointKey(place.runId)}.${process.pid}.${Math.random().toString(36).slice(2)}`,
  );
  if (existsSync(index)) copyFileSync(index, own);
  try {
    const result = await work(own);
    renameSync(own, index);
    return result;
  } finally {
    rmSync(own, { force: true });
    rmSync(`${own}.lock`, { force: true });
  }
}

/** Brings `index` up to the workspace as it is now (`add -A`), and returns the tree it records. */
async function recordInto(place: CheckpointPlace, index: string): Promise<string> {
  const env = { GIT_INDEX_FILE: index, GIT_WORK_TREE: place.workspace };
  // -f: the workspace's own .gitignore does not decide what a checkpoint holds; `exclude` does.
  // A nested repository is left out: with commits it is recorded as its commit (a gitlink, its
  // files untouched by a restore), without one git says so and goes on (--ignore-errors).
  await git(place.home, ['add', '-A', '-f', '--ignore-errors', '--', '.', ...excludePathspecs(place)], {
    cwd: place.workspace,
    env,
    benign: /^error: '.*' does not have a commit checked out$/,
  });
  return (await git(place.home, ['write-tree'], { cwd: place.workspace, env })).trim();
}

function stepTreeFile(home: string, runId: string, stepId: string): string {
  return join(runFolder(home, runId), `${checkpointKey(stepId)}.after`);
}

/** The tree the step's latest attempt left (`rememberStepTree`), or null. */
export function lastStepTree(home: string, runId: string, stepId: string): string | null {
  try {
    return readFileSync(stepTreeFile(home, runId, stepId), 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** Keeps the tree an attempt of the step left: the next attempt sees whether the folder changed since. */
export function rememberStepTree(home: string, runId: string, stepId: string, tree: string): void {
  writeFileSync(stepTreeFile(home, runId, stepId), `${tree}\n`, { mode: 0o600 });
}

/**
 * A run that works in a hidden folder itself (a workflow's default workspace is the Baton home)
 * has nothing of its own to record, and a restore there would rewrite the store: refused.
 */
function refuseHiddenWorkspace(place: CheckpointPlace): void {
  const same = (place.hidden ?? []).some((folder) => relative(place.workspace, folder) === '');
  if (same) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `checkpoint: the run works in ${place.workspace}, which holds the Baton store itself: give it a workspace of its own, or set checkpoint: none`,
    );
  }
}

/** Records the workspace as it is now; returns its tree id, kept until the run's checkpoints are dropped. */
export async function snapshotWorkspace(place: CheckpointPlace): Promise<string> {
  refuseHiddenWorkspace(place);
  await ensureRepo(place.home);
  mkdirSync(place.workspace, { recursive: true });
  const tree = await withRunIndex(place, (index) => recordInto(place, index));
  // An unchanged workspace gives the tree it gave before: its ref is there already (one process
  // fewer). Refs are never packed here (no gc of refs), so a ref is a file.
  const ref = `${runRefs(place.runId)}${tree}`;
  if (!existsSync(join(checkpointRepo(place.home), ref))) await git(place.home, ['update-ref', ref, tree]);
  return tree;
}

/**
 * Makes the workspace hold exactly `tree` (excluded and hidden paths untouched): files it lacks are
 * written, files it does not hold are removed. Idempotent, so an interrupted restore is finished by
 * running it again (see runtime/workspace-restore.ts for the journal that does).
 */
export async function restoreWorkspace(place: CheckpointPlace, tree: string): Promise<void> {
  refuseHiddenWorkspace(place);
  await ensureRepo(place.home);
  await requireTree(place.home, tree);
  mkdirSync(place.workspace, { recursive: true });
  await withRunIndex(place, async (index) => {
    // The index first learns what is there now (an interrupted restore left a mix), then
    // read-tree moves the files from that to `tree`.
    await recordInto(place, index);
    const env = { GIT_INDEX_FILE: index, GIT_WORK_TREE: place.workspace };
    await git(place.home, ['read-tree', '--reset', '-u', tree], { cwd: place.workspace, env });
  });
}

/**
 * A checkpoint lives in the home of the worker that recorded it: on PostgreSQL with several
 * machines, another one's tree is not here (nor is the workspace it belongs to).
 */
async function requireTree(home: string, tree: string): Promise<void> {
  try {
    await git(home, ['cat-file', '-e', `${tree}^{tree}`]);
  } catch {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `checkpoint ${tree.slice(0, 12)} is not in ${checkpointRepo(home)}: a worker with another Baton home (another machine?) recorded it, where the run's workspace is; run this there, or keep the files (--keep-files)`,
    );
  }
}

/** What changed from tree `before` to tree `after` (null: an empty workspace), path by path. */
export async function changedFiles(
  home: string,
  before: string | null,
  after: string,
): Promise<FileChange[]> {
  if (!existsSync(checkpointRepo(home))) return [];
  const out = await git(home, [
    'diff-tree',
    '-r',
    '-z',
    '--no-renames',
    '--name-status',
    before ?? EMPTY_TREE,
    after,
  ]);
  const parts = out.split('\0');
  const changes: FileChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const status = parts[i]!;
    const path = parts[i + 1]!;
    changes.push({ path, change: status === 'A' ? 'added' : status === 'D' ? 'removed' : 'changed' });
  }
  return changes;
}

/**
 * The unified diff from `before` to `after` (text files; git says `Binary files differ` for the
 * others), of `paths` or of everything, cut at `maxBytes`.
 */
export async function unifiedDiff(
  home: string,
  before: string | null,
  after: string,
  paths: readonly string[] = [],
  maxBytes = 256 * 1024,
): Promise<{ text: string; truncated: boolean }> {
  if (!existsSync(checkpointRepo(home))) return { text: '', truncated: false };
  const args = [
    'diff',
    '--no-renames',
    '--no-ext-diff',
    '--no-textconv',
    '--no-color',
    before ?? EMPTY_TREE,
    after,
  ];
  const text = await git(
    home,
    paths.length > 0 ? [...args, '--', ...paths.map((p) => `:(literal)${p}`)] : args,
    {
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  if (Buffer.byteLength(text) <= maxBytes) return { text, truncated: false };
  return { text: Buffer.from(text).subarray(0, maxBytes).toString('utf8'), truncated: true };
}

/**
 * Forgets the checkpoints of `runIds` (their refs and index files); returns how many runs had any.
 * Their objects stay until `pruneCheckpoints`.
 */
export async function forgetCheckpoints(home: string, runIds: readonly string[]): Promise<number> {
  if (!existsSync(checkpointRepo(home)) || runIds.length === 0) return 0;
  let forgotten = 0;
  const deletes: string[] = [];
  for (const runId of runIds) {
    // The refs of a run are loose files (Baton never packs refs): listed without a git process.
    const trees = filesIn(join(checkpointRepo(home), runRefs(runId)));
    for (const tree of trees) deletes.push(`delete ${runRefs(runId)}${tree}\n`);
    rmSync(runFolder(home, runId), { recursive: true, force: true });
    if (trees.length > 0) forgotten++;
  }
  if (deletes.length > 0) await gitWithInput(home, ['update-ref', '--stdin'], deletes.join(''));
  return forgotten;
}

function filesIn(folder: string): string[] {
  try {
    return readdirSync(folder, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

/** Removes the objects no checkpoint reaches any more (after `forgetCheckpoints`). */
export async function pruneCheckpoints(home: string): Promise<void> {
  if (existsSync(checkpointRepo(home))) await git(home, ['prune', '--expire=now']);
}

function gitWithInput(home: string, args: readonly string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env: gitEnv(home), stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-2000);
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new BatonError('INVALID_ARGUMENT', `checkpoint: git ${args[0]} failed: ${stderr.trim()}`)),
    );
    child.stdin.end(input);
  });
}
