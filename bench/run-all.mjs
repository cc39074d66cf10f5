// Runs every benchmark BENCH_RUNS times (default 5), each measurement in a fresh child process,
// rounds interleaved so that machine noise hits every benchmark alike. Prints median/min/max,
// the goal and the ratio to the floor measured in the same run; writes bench/results/latest.json.
// BENCH_ONLY=floor,parallel-256 runs a subset (the floor always runs).
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const CHILD_TIMEOUT_MS = 180_000;

/**
 * Each benchmark: the workload script and its arguments, the figures to report (`pick`), and per
 * figure its unit, whether more is better, its goal, and how it compares with the floor:
 * `rate` = value / floor tx/s (steps per floor commit), `time` = value / floor ms per tx.
 */
/** What W's process is resident with as it exits (bench/max-rss.cjs, Linux only), under its peak. */
const RSS_PARTS = [
  ['rssNodeBinaryMb', 'the node executable'],
  ['rssOtherFilesMb', 'other files (libraries, SQLite)'],
  ['rssMallocMb', 'malloc'],
  ['rssAnonymousMb', 'anonymous (V8 heap, stacks)'],
  ['v8NewSpaceMb', 'of it V8 new space (committed)'],
  ['v8OldSpaceMb', 'of it V8 old space (committed)'],
].map(([key, what]) => ({ key, label: `    at exit: ${what}`, unit: 'MB', higher: false, optional: true }));

const BENCHMARKS = [
  {
    name: 'floor',
    script: 'floor.mjs',
    figures: [
      { key: 'txPerSec', label: 'floor (1 insert/txn, FULL)', unit: 'tx/s', higher: true, vsFloor: 'rate' },
      { key: 'msPerTx', label: 'floor ms per transaction', unit: 'ms/tx', higher: false, vsFloor: 'time' },
      {
        key: 'msPerStepCommit',
        label: "  floor of a sequential step's commit",
        unit: 'ms/tx',
        higher: false,
        vsFloor: 'time',
      },
    ],
  },
  {
    name: 'parallel-256',
    script: 'parallel.mjs',
    args: ['256'],
    figures: [
      {
        key: 'stepsPerSec',
        label: '200x10 parallel, conc 256',
        unit: 'st/s',
        higher: true,
        goal: 3000,
        vsFloor: 'rate',
      },
    ],
  },
  {
    name: 'parallel-64',
    script: 'parallel.mjs',
    args: ['64'],
    figures: [
      {
        key: 'stepsPerSec',
        label: '200x10 parallel, conc 64',
        unit: 'st/s',
        higher: true,
        goal: 3000,
        vsFloor: 'rate',
      },
    ],
  },
  {
    name: 'sequential',
    script: 'sequential.mjs',
    figures: [
      {
        key: 'msPerStep',
        label: '1x200 sequential',
        unit: 'ms/st',
        higher: false,
        goal: 0.75,
        vsFloor: 'time',
      },
      { key: 'peakRssMb', label: '1x200 peak RSS', unit: 'MB', higher: false, goal: 80 },
    ],
  },
  {
    name: 'api-w',
    script: 'api.mjs',
    args: ['w', '256'],
    figures: [
      {
        key: 'stepsPerSec',
        label: '200x10 public API, starts included',
        unit: 'st/s',
        higher: true,
        vsFloor: 'rate',
        goalText: '>= 0.8x floor',
      },
      {
        key: 'msPerStart',
        label: '  ms per baton.start (200 at once)',
        unit: 'ms',
        higher: false,
        vsFloor: 'time',
      },
      { key: 'appPeakRssMb', label: '  its process peak RSS', unit: 'MB', higher: false, goal: 80 },
      ...RSS_PARTS,
      {
        key: 'floorPeakRssMb',
        label: '  (floor: node + better-sqlite3 committing a row)',
        unit: 'MB',
        higher: false,
      },
    ],
  },
  {
    name: 'w-sql',
    script: 'w-sql.mjs',
    figures: [
      {
        key: 'stepsPerSec',
        label: "  (floor of W: Baton's SQL for it alone, no engine)",
        unit: 'st/s',
        higher: true,
        vsFloor: 'rate',
      },
    ],
  },
  {
    name: 'api-seq',
    script: 'api.mjs',
    args: ['seq'],
    figures: [
      {
        key: 'msPerStep',
        label: '1x200 public API, process start incl.',
        unit: 'ms/st',
        higher: false,
        vsFloor: 'time',
        goalText: '<= 2.0x floor',
      },
      { key: 'firstStepMs', label: '  spawn to first step', unit: 'ms', higher: false },
      {
        key: 'afterFirstMsPerStep',
        label: '  ms/step after the first',
        unit: 'ms/st',
        higher: false,
        vsFloor: 'time',
      },
      { key: 'appPeakRssMb', label: '  its process peak RSS', unit: 'MB', higher: false, goal: 80 },
    ],
  },
  {
    name: 'check',
    script: 'check-startup.mjs',
    figures: [
      {
        key: 'checkMs',
        label: 'baton check, nothing due',
        unit: 'ms',
        higher: false,
        goal: 150,
        vsFloor: 'time',
      },
      {
        key: 'checkEsmEntryMs',
        label: '  same, node dist/cli/main.js check',
        unit: 'ms',
        higher: false,
        vsFloor: 'time',
      },
      { key: 'nodeMs', label: '  (reference: node -e 0)', unit: 'ms', higher: false, vsFloor: 'time' },
      {
        key: 'sqliteFloorMs',
        label: '  (reference: node + better-sqlite3 read)',
        unit: 'ms',
        higher: false,
        vsFloor: 'time',
      },
      { key: 'overNodeMs', label: '  check minus node -e 0', unit: 'ms', higher: false, vsFloor: 'time' },
      {
        key: 'checkNoExtraCaMs',
        label: '  check, NODE_EXTRA_CA_CERTS unset',
        unit: 'ms',
        higher: false,
        vsFloor: 'time',
      },
      {
        key: 'nodeNoExtraCaMs',
        label: '  node -e 0, NODE_EXTRA_CA_CERTS unset',
        unit: 'ms',
        higher: false,
        vsFloor: 'time',
      },
    ],
  },
  {
    name: 'startup',
    script: 'startup.mjs',
    figures: [
      { key: 'nodeMs', label: 'startup floor: node -e 0', unit: 'ms', higher: false },
      { key: 'nodeRssMb', label: '  floor peak RSS', unit: 'MB', higher: false },
      { key: 'esmNodeMs', label: '  (reference: ES module -e 0)', unit: 'ms', higher: false },
      { key: 'importMs', label: 'import of the package', unit: 'ms', higher: false },
      { key: 'importOverNodeMs', label: '  import minus node -e 0', unit: 'ms', higher: false, goal: 150 },
      { key: 'importCpuOverNodeMs', label: '  same in CPU time', unit: 'ms', higher: false },
      { key: 'importRssMb', label: '  import peak RSS', unit: 'MB', higher: false },
      {
        key: 'importRssOverNodeMb',
        label: '  import RSS minus node -e 0',
        unit: 'MB',
        higher: false,
        goal: 25,
      },
      { key: 'checkMs', label: 'baton check, nothing due', unit: 'ms', higher: false },
      { key: 'checkOverNodeMs', label: '  check minus node -e 0', unit: 'ms', higher: false, goal: 30 },
      { key: 'checkCpuOverNodeMs', label: '  same in CPU time', unit: 'ms', higher: false },
      { key: 'checkRssMb', label: '  check peak RSS', unit: 'MB', higher: false },
    ],
  },
  {
    name: 'legacy-check',
    script: 'legacy-check.mjs',
    figures: [
      {
        key: 'msPerStep',
        label: 'state.json check, 50 steps (true)',
        unit: 'ms/st',
        higher: false,
        goal: 5,
        vsFloor: 'time',
      },
      {
        key: 'rawMsPerStep',
        label: '  raw, with process start',
        unit: 'ms/st',
        higher: false,
        vsFloor: 'time',
      },
      {
        key: 'floorMsPerStep',
        label: '  (reference: spawn true + atomic write)',
        unit: 'ms/st',
        higher: false,
        vsFloor: 'time',
      },
    ],
  },
  {
    name: 'hostile',
    script: 'hostile-plans.mjs',
    figures: [
      ...[
        ['valid', '10k-step plan accepted (run --detach)'],
        ['badDep', '10k-step plan, one bad dependsOn'],
        ['cycle', '10k-step cycle refused'],
        ['deepJson', '100k-deep JSON plan refused'],
        ['deepYaml', '100k-deep YAML plan refused'],
      ].flatMap(([key, label]) => [
        { key: `${key}Ms`, label, unit: 'ms', higher: false, goal: 1000 },
        { key: `${key}CpuMs`, label: '  CPU time', unit: 'ms', higher: false },
        { key: `${key}RssMb`, label: '  peak RSS', unit: 'MB', higher: false, goal: 200 },
        { key: `${key}FloorMs`, label: '  (floor: node reads + JSON.parse)', unit: 'ms', higher: false },
        { key: `${key}FloorCpuMs`, label: '  (floor CPU time)', unit: 'ms', higher: false },
        { key: `${key}FloorRssMb`, label: '  (floor peak RSS)', unit: 'MB', higher: false },
      ]),
    ],
  },
  // Issue 20's plan sizes: 10,000-step plans validated and stored, refused, run, and read back.
  {
    name: 'big-plans',
    script: 'big-plans.mjs',
    figures: [
      { key: 'floor10kMs', label: '(floor: node reads + parses the 10k plan)', unit: 'ms', higher: false },
      { key: 'floor10kCpuMs', label: '  floor CPU time', unit: 'ms', higher: false },
      ...[
        ['cli', 'run --detach'],
        ['api', 'baton.start'],
      ].flatMap(([via, what]) => [
        { key: `${via}100Ms`, label: `100-step plan, ${what}`, unit: 'ms', higher: false },
        { key: `${via}10kMs`, label: `10k-step plan, ${what}`, unit: 'ms', higher: false },
        { key: `${via}ExtraMs`, label: '  10k minus 100', unit: 'ms', higher: false, goal: 1000 },
        { key: `${via}ExtraCpuMs`, label: '  same in CPU time', unit: 'ms', higher: false, goal: 1000 },
        { key: `${via}10kRssMb`, label: '  peak RSS', unit: 'MB', higher: false, goal: 200 },
        {
          key: `${via}BadDepMs`,
          label: `10k, a bad dependsOn, ${what}`,
          unit: 'ms',
          higher: false,
          goal: 1000,
        },
        { key: `${via}BadDepCpuMs`, label: '  CPU time', unit: 'ms', higher: false, goal: 1000 },
        { key: `${via}BadDepRssMb`, label: '  peak RSS', unit: 'MB', higher: false, goal: 200 },
        { key: `${via}CycleMs`, label: `10k-step cycle, ${what}`, unit: 'ms', higher: false, goal: 1000 },
        { key: `${via}CycleCpuMs`, label: '  CPU time', unit: 'ms', higher: false, goal: 1000 },
        { key: `${via}CycleRssMb`, label: '  peak RSS', unit: 'MB', higher: false, goal: 200 },
      ]),
    ],
  },
  {
    name: 'big-plan-run',
    script: 'big-plan-run.mjs',
    figures: [
      {
        key: 'wStepsPerSec',
        label: 'W (200x10, conc 256) in the same process',
        unit: 'st/s',
        higher: true,
        vsFloor: 'rate',
      },
      {
        key: 'bigStepsPerSec',
        label: '10k-step plan of fn steps, drain',
        unit: 'st/s',
        higher: true,
        vsFloor: 'rate',
      },
      { key: 'bigVsW', label: '  vs W', unit: 'x', higher: true, goal: 0.5 },
      {
        key: 'settledStepsPerSec',
        label: '  same, until-settled',
        unit: 'st/s',
        higher: true,
        vsFloor: 'rate',
      },
      { key: 'settledVsW', label: '  vs W', unit: 'x', higher: true, goal: 0.5 },
      { key: 'bigCreateMs', label: '  storing it (startRun)', unit: 'ms', higher: false },
      { key: 'statusMs', label: 'baton status of the 10k-step run', unit: 'ms', higher: false, goal: 300 },
      { key: 'statusJsonMs', label: '  status --json', unit: 'ms', higher: false, goal: 300 },
      { key: 'status100Ms', label: '  (status of a 100-step run)', unit: 'ms', higher: false },
      { key: 'statusJson100Ms', label: '  (status --json of it)', unit: 'ms', higher: false },
      {
        key: 'statusFloorMs',
        label: '  (floor of status: node reads its step counts)',
        unit: 'ms',
        higher: false,
      },
      {
        key: 'statusJsonFloorMs',
        label: '  (floor of --json: node reads its step state rows and plan text)',
        unit: 'ms',
        higher: false,
      },
    ],
  },
  {
    name: 'fanout',
    script: 'fanout.mjs',
    figures: [
      {
        key: 'itemsPerSec',
        label: '10k-item fan-out of fn steps, drain',
        unit: 'st/s',
        higher: true,
        vsFloor: 'rate',
      },
      { key: 'vsW', label: '  vs W of the same process', unit: 'x', higher: true, goal: 0.5 },
      {
        key: 'expansionMs',
        label: '  its expansion (one cycle, committed)',
        unit: 'ms',
        higher: false,
        goal: 1000,
      },
    ],
  },
  {
    name: 'rerun',
    script: 'rerun.mjs',
    figures: [
      {
        key: 'rerunMs',
        label: 'rerun of the last step of a 10k-step run (Store.rerunFrom, fresh handle)',
        unit: 'ms',
        higher: false,
        goal: 200,
      },
      {
        key: 'rerunFloorMs',
        label: '  (floor: getRun of that run, fresh handle)',
        unit: 'ms',
        higher: false,
      },
      { key: 'cliMs', label: '  `baton rerun --json` (process)', unit: 'ms', higher: false },
      { key: 'cliNodeMs', label: '  (a bare node -e 0)', unit: 'ms', higher: false },
    ],
  },
  // Issue 40: the stall watchdog of agent steps.
  {
    name: 'stall',
    script: 'stall.mjs',
    figures: [
      {
        key: 'stallLateMs',
        label: 'stall stop after stallTimeoutMs (2 s, 1k files)',
        unit: 'ms',
        higher: false,
        goal: 1000,
      },
      {
        key: 'deadlineLateMs',
        label: '  (floor: the same child stopped at a 2 s deadline)',
        unit: 'ms',
        higher: false,
      },
      {
        key: 'watchCostPct',
        label: 'watchdog CPU while an agent streams, % of a core',
        unit: '%',
        higher: false,
        goal: 2,
      },
    ],
  },
  // Issue 40 item 4: a workspace checkpoint (`checkpoint: workspace`) of 10,000 files / 100 MB.
  {
    name: 'checkpoint',
    script: 'checkpoint.mjs',
    figures: [
      {
        key: 'firstMs',
        label: 'workspace checkpoint, 10k files / 100 MB: first (cold)',
        unit: 'ms',
        higher: false,
      },
      { key: 'hashAllMs', label: '  (floor: read + sha1 of every file)', unit: 'ms', higher: false },
      { key: 'unchangedMs', label: '  checkpoint, nothing changed', unit: 'ms', higher: false, goal: 200 },
      {
        key: 'statWalkMs',
        label: '  (floor: lstat walk of the workspace)',
        unit: 'ms',
        higher: false,
      },
      {
        key: 'changed100Ms',
        label: '  checkpoint, 100 files changed',
        unit: 'ms',
        higher: false,
        goal: 1000,
      },
      {
        key: 'hash100Ms',
        label: '  (floor: read + sha1 of the 100 files)',
        unit: 'ms',
        higher: false,
      },
      {
        key: 'changed100FloorMs',
        label: '  (floor: that + the lstat walk)',
        unit: 'ms',
        higher: false,
      },
    ],
  },
  // Issue 41 item 1: a verification gate's `verify.command` that exits at once.
  {
    name: 'verify',
    script: 'verify.mjs',
    figures: [
      { key: 'stepMs', label: 'agent step (`true`), no verify', unit: 'ms', higher: false },
      { key: 'verifiedStepMs', label: '  with verify: { command: [true] }', unit: 'ms', higher: false },
      {
        key: 'programMs',
        label: "  (floor: the program's own time, true through runProcess)",
        unit: 'ms',
        higher: false,
      },
      {
        key: 'verifyAddedMs',
        label: 'verify.command cost beyond the program itself',
        unit: 'ms',
        higher: false,
        goal: 50,
      },
    ],
  },
  // Issue 41 item 2: tool calls waiting for a person cost the claim cycle nothing.
  {
    name: 'tool-approvals',
    script: 'tool-approvals.mjs',
    figures: [
      { key: 'claimMsNone', label: 'claim cycle, no tool call waiting', unit: 'ms', higher: false },
      {
        key: 'claimMsPending',
        label: '  with 1,000 tool calls waiting for approval',
        unit: 'ms',
        higher: false,
      },
      { key: 'claimRatio', label: '  ratio (goal <= 1.1)', unit: 'x', higher: false, goal: 1.1 },
    ],
  },
  // Issue 42 item 1: a fan-out of 1,000 sub-plan steps, each child a one-step plan of a no-op fn
  // step (goal >= 0.3x W of the same process).
  {
    name: 'sub-plans',
    script: 'sub-plans.mjs',
    figures: [
      {
        key: 'itemsPerSec',
        label: 'fan-out of 1,000 sub-plans (a child run each), drain',
        unit: 'items/s',
        higher: true,
      },
      { key: 'wStepsPerSec', label: '  floor: W of the same process', unit: 'st/s', higher: true },
      { key: 'vsW', label: '  vs W (goal >= 0.3)', unit: 'x', higher: true, goal: 0.3 },
    ],
  },
  // Issue 43 item 1: a signed webhook delivery to a stored run (goal <= 20 ms median, beside
  // createRun alone), and 1,000 deliveries a second for 10 s with nothing lost.
  {
    name: 'triggers',
    script: 'triggers.mjs',
    figures: [
      {
        key: 'deliveryMedianMs',
        label: 'a signed delivery to a stored run, SQLite (goal <= 20 ms)',
        unit: 'ms',
        higher: false,
        goal: 20,
      },
      { key: 'createRunMedianMs', label: '  floor: createRun alone, same store', unit: 'ms', higher: false },
      { key: 'offeredPerSec', label: '1,000/s offered for 10 s: offered', unit: '/s', higher: true },
      {
        key: 'answeredPerSec',
        label: '  all answered: count / (first send to last answer)',
        unit: '/s',
        higher: true,
      },
      { key: 'loadP50Ms', label: '  a delivery under that load, median', unit: 'ms', higher: false },
      { key: 'loadP99Ms', label: '  a delivery under that load, p99', unit: 'ms', higher: false },
      { key: 'tailMs', label: '  last answer after the last send', unit: 'ms', higher: false },
      { key: 'lost', label: '  deliveries lost (goal 0)', unit: '', higher: false, goal: 0 },
    ],
  },
  // Issue 43 part 2: a `baton.watch` subscriber on a run adds at most 5% to W (ratio >= 0.95).
  {
    name: 'watch',
    script: 'watch.mjs',
    figures: [
      { key: 'watchedStepsPerSec', label: 'W with one baton.watch subscriber', unit: 'st/s', higher: true },
      { key: 'wStepsPerSec', label: '  W without, same process', unit: 'st/s', higher: true },
      { key: 'ratio', label: '  with / without (goal >= 0.95)', unit: 'x', higher: true, goal: 0.95 },
    ],
  },
  // Issue 43 item 3: W with every step under a templated flow key, 10 distinct keys, beside W
  // without flow control in the same process (goal >= 0.9x W).
  {
    name: 'flow-keys',
    script: 'flow-keys.mjs',
    figures: [
      {
        key: 'keyedStepsPerSec',
        label: 'W, 10 templated flow keys (limits stored, never binding)',
        unit: 'st/s',
        higher: true,
      },
      { key: 'wStepsPerSec', label: '  floor: W of the same process', unit: 'st/s', higher: true },
      { key: 'vsW', label: '  vs W (goal >= 0.9)', unit: 'x', higher: true, goal: 0.9 },
    ],
  },
  // Issue 42 items 3 and 4: a bulk retry over 10,000 blocked runs (goal <= 2 s, the whole
  // process, beside the process that opens the store and reads a row), and `status --label` over
  // 100,000 runs (goal <= 1.2x `status`).
  {
    name: 'bulk',
    script: 'bulk.mjs',
    figures: [
      {
        key: 'sqliteRetryMs',
        label: '`retry --blocked` over 10,000 runs, SQLite (goal <= 2 s)',
        unit: 'ms',
        higher: false,
        goal: 2000,
      },
      { key: 'sqliteFloorMs', label: '  floor: `status --limit 1` on that store', unit: 'ms', higher: false },
      {
        key: 'pgRetryMs',
        label: '`retry --blocked` over 10,000 runs, PostgreSQL (goal <= 2 s)',
        unit: 'ms',
        higher: false,
        goal: 2000,
        optional: true,
      },
      {
        key: 'pgFloorMs',
        label: '  floor: `status --limit 1` on that store',
        unit: 'ms',
        higher: false,
        optional: true,
      },
      { key: 'statusMs', label: '`status` over 100,000 runs', unit: 'ms', higher: false },
      {
        key: 'statusLabelMs',
        label: '  `status --label team=t3` (10,000 of them)',
        unit: 'ms',
        higher: false,
      },
      { key: 'statusLabelRatio', label: '  ratio (goal <= 1.2)', unit: 'x', higher: false, goal: 1.2 },
    ],
  },
  {
    name: 'waiting',
    script: 'waiting.mjs',
    figures: [
      ...[
        ['claim', 'claiming cycle (1 step, fsynced)', 1.1],
        ['list', 'listRuns', 1.2],
        ['page', "console's listRunPage", 1.2],
        ['status', '`baton status` (process)', 1.2],
        ['wake', 'nextWakeAt (idle poll)', null],
      ].flatMap(([p, label, goal]) => [
        {
          key: `${p}MsRatio`,
          label: `${label}: 10k waiting / none`,
          unit: 'x',
          higher: false,
          ...(goal === null ? { goalText: 'not a goal' } : { goal }),
        },
        {
          key: `${p}MsWaiting`,
          label: '  with 10k waiting runs',
          unit: 'ms',
          higher: false,
          vsFloor: 'time',
        },
        {
          key: `${p}MsEmpty`,
          label: '  (floor: no waiting run)',
          unit: 'ms',
          higher: false,
          vsFloor: 'time',
        },
      ]),
    ],
  },
  {
    name: 'crash',
    script: 'crash-restart.mjs',
    figures: [
      { key: 'inFlightAtKill', label: 'crash: in flight at kill', unit: 'steps', higher: false },
      {
        key: 'reExecuted',
        label: 'crash: re-executed',
        unit: 'steps',
        higher: false,
        goalText: '<= in-flight',
      },
      { key: 'secondWorkerFirstCommitMs', label: 'crash: restart to 1st commit', unit: 'ms', higher: false },
      {
        key: 'secondWorkerStepsPerSec',
        label: 'crash: 2nd worker rest',
        unit: 'st/s',
        higher: true,
        vsFloor: 'rate',
      },
    ],
  },
  {
    name: 'console',
    script: 'console.mjs',
    figures: [
      ...[
        ['sqlite', 'SQLite'],
        ['pg', 'PostgreSQL'],
      ].flatMap(([p, store]) => [
        {
          key: `${p}PageMs`,
          label: `console: runs list, 10k runs, ${store}`,
          unit: 'ms',
          higher: false,
          goal: 50,
        },
        { key: `${p}DeepPageMs`, label: '  page 100 of 200', unit: 'ms', higher: false, goal: 50 },
        { key: `${p}FilteredPageMs`, label: '  status + plan filter', unit: 'ms', higher: false, goal: 50 },
        { key: `${p}SearchPageMs`, label: '  id search', unit: 'ms', higher: false, goal: 50 },
        { key: `${p}QueryFloorMs`, label: '  (floor: bare listRunPage)', unit: 'ms', higher: false },
        { key: `${p}HttpFloorMs`, label: '  (floor: a static file over HTTP)', unit: 'ms', higher: false },
      ]),
      {
        key: 'timelineMs',
        label: 'console: timeline data, 1000 attempts, SQLite',
        unit: 'ms',
        higher: false,
        goal: 100,
      },
      {
        key: 'timelineFloorMs',
        label: '  (floor: bare getRun+getAttempts+getEvents)',
        unit: 'ms',
        higher: false,
      },
      { key: 'pgTimelineMs', label: '  same on PostgreSQL', unit: 'ms', higher: false, goal: 100 },
      { key: 'pgTimelineFloorMs', label: '  (floor on PostgreSQL)', unit: 'ms', higher: false },
      { key: 'runPageMs', label: '  its run page (HTML)', unit: 'ms', higher: false },
      {
        key: 'runPageKb',
        label: '  run page weight (HTML+JS+CSS+data)',
        unit: 'KB',
        higher: false,
        goal: 150,
      },
      {
        key: 'drawMs',
        label: '  Chromium: navigation to timeline drawn',
        unit: 'ms',
        higher: false,
        goal: 1000,
      },
      { key: 'drawFloorMs', label: '  (floor: a page without timeline)', unit: 'ms', higher: false },
    ],
  },
  {
    name: 'history',
    script: 'history.mjs',
    figures: [
      ...[
        ['list', 'listRuns, 100k finished runs'],
        ['listRunning', 'listRuns status=running (polling)'],
        ['page', "console's listRunPage"],
        ['status', '`baton status` (process)'],
        ['wake', 'nextWakeAt (idle poll)'],
        ['claim', 'claiming cycle (1 step, fsynced)'],
      ].flatMap(([p, label]) => [
        // The goal is on listing runs and claiming work; an idle poll's 0.01 ms of deeper b-trees is not.
        p === 'wake'
          ? {
              key: `${p}MsRatio`,
              label: `${label}: history/empty`,
              unit: 'x',
              higher: false,
              goalText: 'not a goal',
            }
          : { key: `${p}MsRatio`, label: `${label}: history/empty`, unit: 'x', higher: false, goal: 1.2 },
        { key: `${p}MsHistory`, label: '  with history', unit: 'ms', higher: false, vsFloor: 'time' },
        { key: `${p}MsEmpty`, label: '  (floor: empty store)', unit: 'ms', higher: false, vsFloor: 'time' },
      ]),
      { key: 'gcMs', label: '`baton gc` of 100k runs', unit: 'ms', higher: false },
      { key: 'gcFloorMs', label: '  (floor: bare DELETE, 1 txn)', unit: 'ms', higher: false },
      { key: 'gcPeakRssMb', label: '  gc peak RSS', unit: 'MB', higher: false, goal: 200 },
      { key: 'nodeRssMb', label: '  (floor: node -e 0 peak RSS)', unit: 'MB', higher: false },
      { key: 'dbMbBefore', label: '  database before gc', unit: 'MB', higher: false },
      { key: 'dbMbAfter', label: '  database after gc', unit: 'MB', higher: false },
    ],
  },
  {
    name: 'schedules',
    script: 'schedules.mjs',
    figures: [
      {
        key: 'checkExtraMs',
        label: '`baton check`, nothing due: 1,000 schedules minus none',
        unit: 'ms',
        higher: false,
        goal: 10,
      },
      { key: 'checkSchedulesMs', label: '  with 1,000 schedules', unit: 'ms', higher: false },
      {
        key: 'storeWorkExtraMs',
        label: "  a check's store work in process (open, cycle, nextWakeAt): 1,000 minus none",
        unit: 'ms',
        higher: false,
        goal: 10,
      },
      { key: 'storeWorkSchedulesMs', label: '    with 1,000 schedules', unit: 'ms', higher: false },
      { key: 'storeWorkNoSchedulesMs', label: '    (floor: no schedule)', unit: 'ms', higher: false },
      { key: 'checkNoSchedulesMs', label: '  (floor: no schedule)', unit: 'ms', higher: false },
      {
        key: 'fullCheckExtraMs',
        label: '  full check (engine cycle): 1,000 minus none',
        unit: 'ms',
        higher: false,
        goal: 10,
      },
      {
        key: 'sqliteTickMs',
        label: 'tick of 1,000 due slots (1,000 runs), SQLite',
        unit: 'ms',
        higher: false,
        goal: 1000,
      },
      { key: 'sqliteTickFloorMs', label: '  (floor: 1,000 createRun at once)', unit: 'ms', higher: false },
      {
        key: 'pgTickMs',
        label: 'tick of 1,000 due slots, PostgreSQL',
        unit: 'ms',
        higher: false,
        goal: 1000,
      },
      { key: 'pgTickFloorMs', label: '  (floor: 1,000 createRun at once)', unit: 'ms', higher: false },
    ],
  },
];

function runWorkload(bench) {
  const started = Date.now();
  const child = spawnSync(process.execPath, [join(here, 'workloads', bench.script), ...(bench.args ?? [])], {
    encoding: 'utf8',
    timeout: CHILD_TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = child.stdout?.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
  if (child.status !== 0 || !line) {
    const why = child.error
      ? child.error.message
      : `exit ${child.status}${child.signal ? ` (${child.signal})` : ''}`;
    return {
      error: `${why}\n${child.stderr ?? ''}${child.stdout ?? ''}`.trim(),
      wallMs: Date.now() - started,
    };
  }
  return { ...JSON.parse(line.slice('BENCH_RESULT '.length)), wallMs: Date.now() - started };
}

const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const selected = BENCHMARKS.filter((b) => b.name === 'floor' || !only || only.includes(b.name));
const samples = Object.fromEntries(selected.map((b) => [b.name, []]));
const failures = [];
const t0 = Date.now();
const load0 = loadavg()[0];

for (let round = 1; round <= RUNS; round++) {
  for (const bench of selected) {
    if (failures.some((f) => f.name === bench.name)) continue;
    const result = runWorkload(bench);
    if (result.error) {
      failures.push({ name: bench.name, round, error: result.error });
      process.stderr.write(`\nFAILED ${bench.name} (round ${round}):\n${result.error}\n`);
      continue;
    }
    samples[bench.name].push(result);
  }
  process.stderr.write(`round ${round}/${RUNS} done (${((Date.now() - t0) / 1000).toFixed(0)} s)\n`);
}

const stats = (values) => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) });
const floorRuns = samples.floor;
if (floorRuns.length === 0) {
  process.stderr.write('the floor benchmark failed: nothing to compare with\n');
  process.exit(1);
}
const floor = {
  txPerSec: stats(floorRuns.map((r) => r.txPerSec)).median,
  msPerTx: stats(floorRuns.map((r) => r.msPerTx)).median,
};

const rows = [];
for (const bench of selected) {
  const runs = samples[bench.name];
  for (const figure of bench.figures) {
    if (runs.length === 0) {
      rows.push({ benchmark: bench.name, label: figure.label, unit: figure.unit, failed: true });
      continue;
    }
    // A figure only some platforms give (the RSS parts read from Linux's /proc) is left out elsewhere.
    if (figure.optional && runs.every((r) => r[figure.key] === undefined)) continue;
    const s = stats(runs.map((r) => r[figure.key]));
    const vsFloor =
      figure.vsFloor === 'rate'
        ? s.median / floor.txPerSec
        : figure.vsFloor === 'time'
          ? s.median / floor.msPerTx
          : null;
    const goal =
      figure.goal === undefined ? (figure.goalText ?? null) : `${figure.higher ? '>=' : '<='} ${figure.goal}`;
    const met =
      figure.goal === undefined ? null : figure.higher ? s.median >= figure.goal : s.median <= figure.goal;
    rows.push({
      benchmark: bench.name,
      label: figure.label,
      key: figure.key,
      unit: figure.unit,
      ...s,
      goal,
      met,
      vsFloor,
      samples: runs.map((r) => r[figure.key]),
    });
  }
}

const fmt = (v) =>
  v === undefined || v === null
    ? ''
    : Math.abs(v) >= 100
      ? v.toFixed(0)
      : Math.abs(v) >= 10
        ? v.toFixed(1)
        : v.toFixed(2);
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
const LABEL_WIDTH = Math.max(30, ...rows.map((r) => r.label.length + 2));
const lines = [
  `${pad('benchmark', LABEL_WIDTH)}${lpad('median', 9)} ${pad('unit', 6)}${lpad('min', 8)}${lpad('max', 8)}   ${pad('goal', 14)}${pad('met', 5)}vs floor`,
];
for (const r of rows) {
  if (r.failed) {
    lines.push(`${pad(r.label, LABEL_WIDTH)}${lpad('FAILED', 9)}`);
    continue;
  }
  const met = r.met === null ? '' : r.met ? 'yes' : 'NO';
  const vs = r.vsFloor === null ? '' : `${fmt(r.vsFloor)}x`;
  lines.push(
    `${pad(r.label, LABEL_WIDTH)}${lpad(fmt(r.median), 9)} ${pad(r.unit, 6)}${lpad(fmt(r.min), 8)}${lpad(fmt(r.max), 8)}   ${pad(r.goal ?? '', 14)}${pad(met, 5)}${vs}`,
  );
}
const crash = samples.crash ?? [];
const load1 = loadavg()[0];
const notes = [
  `${RUNS} runs per benchmark, each in a fresh process; median/min/max over runs.`,
  'vs floor: for rates, steps per floor transaction (higher is better); for times, floor transactions per step or per invocation (lower is better).',
  `floor median: ${fmt(floor.txPerSec)} tx/s = ${fmt(floor.msPerTx)} ms per committed transaction.`,
  crash.length > 0
    ? `crash: every run re-executed <= in-flight at kill (${crash.map((r) => `${r.reExecuted}/${r.inFlightAtKill}`).join(', ')}); committed at kill ${crash.map((r) => r.committedAtKill).join(', ')} of 2000.`
    : null,
  `machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(1)} GB, node ${process.version}, load average ${load0.toFixed(2)} -> ${load1.toFixed(2)}.`,
  `total time ${((Date.now() - t0) / 1000).toFixed(0)} s.`,
].filter(Boolean);
process.stdout.write(`\n${lines.join('\n')}\n\n${notes.map((n) => `- ${n}`).join('\n')}\n`);

const resultsDir = join(here, 'results');
mkdirSync(resultsDir, { recursive: true });
const out = join(resultsDir, 'latest.json');
writeFileSync(
  out,
  `${JSON.stringify(
    {
      at: new Date().toISOString(),
      runs: RUNS,
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model,
        totalMemGb: totalmem() / 2 ** 30,
        node: process.version,
        loadAvgStart: load0,
        loadAvgEnd: load1,
      },
      floor,
      rows,
      samples,
      failures,
    },
    null,
    2,
  )}\n`,
);
// `npm run lint` (biome check .) covers bench/**: leave the file as the project's formatter would.
const biome = join(here, '..', 'node_modules', '.bin', 'biome');
const formatted = spawnSync(biome, ['format', '--write', out], { encoding: 'utf8' });
if (formatted.status !== 0)
  process.stderr.write(`note: could not format ${out} with biome: ${formatted.stderr}\n`);
process.stdout.write(`\nresults written to ${out}\n`);
if (failures.length > 0) {
  process.stderr.write(
    `\n${failures.length} benchmark(s) FAILED: ${failures.map((f) => f.name).join(', ')}\n`,
  );
  process.exit(1);
}
