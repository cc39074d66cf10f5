// What starting Baton costs a process, beside the floor of a bare `node -e 0` measured in the
// same run and the same environment (NODE_EXTRA_CA_CERTS included or not, as the caller has it:
// Node 20 parses that bundle before any JavaScript runs). Each figure is the median of
// BENCH_STARTUP_INVOCATIONS fresh processes (default 10, after one warm-up of each), interleaved:
// - `import` of the package: `node --input-type=module -e "await import(<entry>)"`, the entry
//   named by package.json `exports` (also `--input-type=module -e 0`: Node's ES module loader alone);
// - `baton check` with nothing due (dist/cli/baton.cjs) on a database with 5 finished runs.
// Every process is preloaded with bench/max-rss.cjs, which reports its own peak RSS as it exits.
// "over node" figures are medians of the pairwise differences with the bare node started just before.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Engine } from '../../dist/engine/engine.js';
import {
  assert,
  chainPlan,
  createRuns,
  emit,
  median,
  noopExecutors,
  now,
  openStore,
  tempHome,
} from '../lib.mjs';

const INVOCATIONS = Number(process.env.BENCH_STARTUP_INVOCATIONS ?? 10);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(root, 'dist', 'cli', 'baton.cjs');
const MAX_RSS = join(root, 'bench', 'max-rss.cjs');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const ENTRY = pathToFileURL(join(root, manifest.exports['.'].default)).href;

/**
 * Wall ms, CPU ms (user + system: what a loaded machine disturbs least) and peak RSS (MB) of one
 * fresh `node -r max-rss.cjs <args>`; `check` asserts its output.
 */
function measure(args, check) {
  const start = now();
  const result = spawnSync(process.execPath, ['-r', MAX_RSS, ...args], { encoding: 'utf8' });
  const ms = now() - start;
  check?.(result);
  assert(result.status === 0, `node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  const kb = /BENCH_MAX_RSS_KB (\d+)/.exec(result.stderr)?.[1];
  const us = /BENCH_CPU_US (\d+)/.exec(result.stderr)?.[1];
  assert(kb !== undefined && us !== undefined, `no peak RSS from node ${args.join(' ')}`);
  return { ms, cpuMs: Number(us) / 1000, rssMb: Number(kb) / 1024 };
}

const home = tempHome('startup');
try {
  const store = openStore(home.dbPath);
  await createRuns(store, chainPlan('bench-startup', 3), 5, home.dir);
  await new Engine({ store, executors: noopExecutors(), home: home.dir, owner: 'bench' }).run({
    kind: 'drain',
  });
  await store.close();

  const probes = {
    node: () => measure(['-e', '0']),
    esmNode: () => measure(['--input-type=module', '-e', '0']),
    import: () => measure(['--input-type=module', '-e', `await import(${JSON.stringify(ENTRY)})`]),
    check: () =>
      measure([CLI, 'check', '--home', home.dir], (r) =>
        assert(r.stdout.includes('nothing due'), `baton check: ${r.stdout}${r.stderr}`),
      ),
  };
  for (const probe of Object.values(probes)) probe(); // warm-up: file cache
  const samples = Object.fromEntries(Object.keys(probes).map((name) => [name, []]));
  for (let i = 0; i < INVOCATIONS; i++) {
    for (const [name, probe] of Object.entries(probes)) samples[name].push(probe());
  }
  const ms = (name) => median(samples[name].map((s) => s.ms));
  const rss = (name) => median(samples[name].map((s) => s.rssMb));
  const overNode = (name, key) => median(samples[name].map((s, i) => s[key] - samples.node[i][key]));
  emit({
    invocations: INVOCATIONS,
    extraCaCerts: process.env.NODE_EXTRA_CA_CERTS !== undefined,
    nodeMs: ms('node'),
    nodeRssMb: rss('node'),
    esmNodeMs: ms('esmNode'),
    importMs: ms('import'),
    importOverNodeMs: overNode('import', 'ms'),
    importCpuOverNodeMs: overNode('import', 'cpuMs'),
    importRssMb: rss('import'),
    importRssOverNodeMb: overNode('import', 'rssMb'),
    checkMs: ms('check'),
    checkOverNodeMs: overNode('check', 'ms'),
    checkCpuOverNodeMs: overNode('check', 'cpuMs'),
    checkRssMb: rss('check'),
  });
} finally {
  home.dispose();
}
