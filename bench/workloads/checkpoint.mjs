// Workspace checkpoints (`checkpoint: workspace`): the cost of one `snapshotWorkspace`
// (dist/executors/workspace-checkpoints.js: `git add -A` into the run's own index in the home's
// private `checkpoints.git`, `write-tree`, `update-ref`) on a workspace of 10,000 files / 100 MB
// (100 folders x 100 files of 10 KB of base64 text), the home beside it (not inside), excluding
// `.git/` and `node_modules/` as an agent step's checkpoint does. Figures:
// - the first snapshot (cold: every file hashed, compressed and written as an object), informative,
//   beside reading and sha1-hashing every file;
// - a snapshot with nothing changed, median of ROUNDS (goal <= 200 ms), beside its floor: a plain
//   recursive walk with fs.lstatSync of every entry of the same workspace, the walks and snapshots
//   alternating;
// - a snapshot after 100 files (one in each folder, other files each round) got a line appended,
//   median of ROUNDS, timing only the snapshot (goal <= 1 s), beside its floor: reading and
//   sha1-hashing those 100 files (as git hashes a blob), and that plus the lstat walk, measured in
//   the same round.
// Each snapshot's tree is checked: the first holds 10,000 files, an unchanged one is the same tree,
// a changed one a new tree.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  appendFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { snapshotWorkspace } from '../../dist/executors/workspace-checkpoints.js';
import { assert, emit, median, now } from '../lib.mjs';

const FOLDERS = Number(process.env.BENCH_CHECKPOINT_FOLDERS ?? 100);
const FILES_PER_FOLDER = 100;
const FILE_BYTES = 10_240;
const CHANGED = 100;
const ROUNDS = 5;

const dir = mkdtempSync(join(tmpdir(), 'baton-bench-checkpoint-'));
const workspace = join(dir, 'work');
const home = join(dir, 'home');
const place = { home, runId: 'bench-run', workspace, exclude: ['.git/', 'node_modules/'], hidden: [home] };
const filePath = (folder, file) =>
  join(workspace, `d${String(folder).padStart(2, '0')}`, `f${String(file).padStart(2, '0')}.txt`);

/** Every entry under `folder`, lstat-ed: the least a snapshot must do to learn that nothing changed. */
function statWalk(folder) {
  let entries = 0;
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    const stat = lstatSync(path);
    entries++;
    if (stat.isDirectory()) entries += statWalk(path);
  }
  return entries;
}

/** Reads `paths` and sha1-hashes each as git hashes a blob; returns the bytes read. */
function hashFiles(paths) {
  let bytes = 0;
  for (const path of paths) {
    const content = readFileSync(path);
    createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
    bytes += content.length;
  }
  return bytes;
}

const timed = async (fn) => {
  const start = now();
  const value = await fn();
  return { ms: now() - start, value };
};

try {
  mkdirSync(home);
  const all = [];
  for (let folder = 0; folder < FOLDERS; folder++) {
    mkdirSync(join(workspace, `d${String(folder).padStart(2, '0')}`), { recursive: true });
    for (let file = 0; file < FILES_PER_FOLDER; file++) {
      const path = filePath(folder, file);
      writeFileSync(path, randomBytes((FILE_BYTES * 3) / 4).toString('base64'));
      all.push(path);
    }
  }

  const first = await timed(() => snapshotWorkspace(place));
  const listed = execFileSync('git', ['ls-tree', '-r', '--name-only', first.value], {
    env: { PATH: process.env.PATH, GIT_DIR: join(home, 'checkpoints.git'), GIT_CONFIG_NOSYSTEM: '1' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const recorded = listed.split('\n').filter((line) => line !== '').length;
  assert(recorded === all.length, `the first snapshot holds ${recorded} files of ${all.length}`);
  const hashAll = await timed(() => hashFiles(all));

  const unchanged = [];
  const walks = [];
  for (let round = 0; round < ROUNDS; round++) {
    const walk = await timed(() => statWalk(workspace));
    assert(walk.value === FOLDERS * (FILES_PER_FOLDER + 1), `the walk saw ${walk.value} entries`);
    walks.push(walk.ms);
    const snapshot = await timed(() => snapshotWorkspace(place));
    assert(snapshot.value === first.value, `an unchanged workspace gave tree ${snapshot.value}`);
    unchanged.push(snapshot.ms);
  }

  const changed = [];
  const hashes = [];
  const floors = [];
  let previous = first.value;
  for (let round = 0; round < ROUNDS; round++) {
    const paths = Array.from({ length: CHANGED }, (_, i) =>
      filePath(i % FOLDERS, (round * 7 + Math.floor(i / FOLDERS)) % FILES_PER_FOLDER),
    );
    for (const path of paths) appendFileSync(path, `changed in round ${round}\n`);
    const snapshot = await timed(() => snapshotWorkspace(place));
    assert(snapshot.value !== previous, `round ${round}: 100 changed files gave the same tree`);
    previous = snapshot.value;
    changed.push(snapshot.ms);
    const walk = await timed(() => statWalk(workspace));
    const hash = await timed(() => hashFiles(paths));
    assert(hash.value > CHANGED * FILE_BYTES, `hashed ${hash.value} bytes`);
    hashes.push(hash.ms);
    floors.push(walk.ms + hash.ms);
  }

  emit({
    files: all.length,
    megabytes: (all.length * FILE_BYTES) / 1e6,
    firstMs: first.ms,
    hashAllMs: hashAll.ms,
    unchangedMs: median(unchanged),
    statWalkMs: median(walks),
    changed100Ms: median(changed),
    hash100Ms: median(hashes),
    changed100FloorMs: median(floors),
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
