// The user's view, through the public API in a fresh process (bench/api-app.mjs, which imports
// only the package), creation included:
// - `w`: 200 runs x 10 no-op fn steps, started at once (`Promise.all` of `baton.start`) while a
//   `baton.worker()` of the same process runs; timed from the first start to the moment every run
//   is seen succeeded (steps/s), with the time spent in the 200 starts alone beside it;
// - `seq`: one run of 200 chained no-op steps by `baton.run` (no worker: the call drives it),
//   timed from the spawn of the process to `baton.run` resolving (ms/step, process start
//   included), with the first step's latency from the spawn.
// Both report the process's own peak RSS (bench/max-rss.cjs preloaded), and what it is made of at
// exit: the node executable's pages, other files, malloc, anonymous memory, V8's new and old space.
// Usage: node api.mjs w [concurrency] | node api.mjs seq
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert, emit, tempHome } from '../lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const APP = join(here, '..', 'api-app.mjs');
const MAX_RSS = join(here, '..', 'max-rss.cjs');
const mode = process.argv[2];
const RUNS = Number(process.env.BENCH_RUNS_COUNT ?? 200);
const W_STEPS = 10;
const SEQ_STEPS = Number(process.env.BENCH_SEQ_STEPS ?? 200);
const concurrency = Number(process.argv[3] ?? 256);

const home = tempHome(`api-${mode}`);
try {
  const appArgs = mode === 'w' ? ['w', RUNS, W_STEPS, concurrency] : ['seq', SEQ_STEPS];
  const spawned = Date.now();
  const child = spawnSync(process.execPath, ['-r', MAX_RSS, APP, home.dir, ...appArgs.map(String)], {
    encoding: 'utf8',
    env: { ...process.env, BENCH_RSS_PARTS: '1' },
  });
  const exited = Date.now();
  assert(child.status === 0, `api-app ${appArgs.join(' ')} exited ${child.status}: ${child.stderr}`);
  const line = child.stdout.split('\n').find((l) => l.startsWith('API_RESULT '));
  assert(line, `no API_RESULT from api-app: ${child.stdout}${child.stderr}`);
  const r = JSON.parse(line.slice('API_RESULT '.length));
  const kb = /BENCH_MAX_RSS_KB (\d+)/.exec(child.stderr)?.[1];
  assert(kb !== undefined, `no peak RSS from api-app: ${child.stderr}`);
  // What the resident memory is made of as the process exits (Linux; see bench/max-rss.cjs).
  const parts = /BENCH_RSS_PARTS (.+)/.exec(child.stderr)?.[1];
  const rss = parts ? JSON.parse(parts) : {};
  const common = {
    appPeakRssMb: Number(kb) / 1024,
    ...(parts
      ? {
          rssNodeBinaryMb: rss.nodeBinary,
          rssOtherFilesMb: rss.otherFiles,
          rssMallocMb: rss.malloc,
          rssAnonymousMb: rss.anonymous,
          v8NewSpaceMb: rss.v8NewSpace,
          v8OldSpaceMb: rss.v8OldSpace,
        }
      : {}),
    importMs: r.imported - r.importStart,
    spawnToImportedMs: r.imported - spawned,
    processMs: exited - spawned,
  };
  if (mode === 'w') {
    const total = RUNS * W_STEPS;
    // The floor of the memory figure: a Node process with better-sqlite3 that opens a database in
    // WAL mode and commits one row (what any process with an embedded SQLite store holds).
    const floorDb = JSON.stringify(join(home.dir, 'floor.db'));
    const floorChild = spawnSync(
      process.execPath,
      [
        '-r',
        MAX_RSS,
        '-e',
        `const db = new (require('better-sqlite3'))(${floorDb}); db.pragma('journal_mode = WAL');
db.exec('CREATE TABLE t (v TEXT)'); db.prepare('INSERT INTO t VALUES (?)').run('x'); db.close();`,
      ],
      { encoding: 'utf8', cwd: join(here, '..', '..') },
    );
    assert(floorChild.status === 0, `memory floor exited ${floorChild.status}: ${floorChild.stderr}`);
    const floorKb = /BENCH_MAX_RSS_KB (\d+)/.exec(floorChild.stderr)?.[1];
    assert(r.runs === RUNS, `${r.runs} runs started, expected ${RUNS}`);
    assert(r.attemptsCommitted === total, `worker committed ${r.attemptsCommitted}, expected ${total}`);
    const seconds = (r.end - r.firstStart) / 1000;
    emit({
      ...common,
      concurrency,
      runs: RUNS,
      steps: total,
      seconds,
      stepsPerSec: total / seconds,
      startsMs: r.allStarted - r.firstStart,
      msPerStart: (r.allStarted - r.firstStart) / RUNS,
      stepsRunWhileStarting: r.stepsRunWhileStarting,
      floorPeakRssMb: Number(floorKb) / 1024,
    });
  } else {
    assert(r.ran === SEQ_STEPS && r.results === SEQ_STEPS, `${r.ran} steps ran, ${r.results} results`);
    const ms = r.end - spawned;
    emit({
      ...common,
      steps: SEQ_STEPS,
      ms,
      msPerStep: ms / SEQ_STEPS,
      firstStepMs: r.firstStep - spawned,
      afterFirstMsPerStep: (r.end - r.firstStep) / (SEQ_STEPS - 1),
    });
  }
} finally {
  home.dispose();
}
