// `baton check` with nothing to do: process start to exit of the `baton` command
// (dist/cli/baton.cjs) on an existing database holding a few finished runs. Also times the same
// check through the ES module entry (`node dist/cli/main.js check`), and two references: a bare
// `node -e 0`, and the least any check of a SQLite file can cost here: node requiring
// better-sqlite3 (its addon named directly, as Baton does), opening the same database and reading
// one row.
// The check and `node -e 0` are timed again without NODE_EXTRA_CA_CERTS: Node 20 parses that CA
// bundle before running any JavaScript (about 80 ms here for the Debian bundle), so the pair shows
// what Baton costs apart from what the environment makes every Node process pay.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

const INVOCATIONS = Number(process.env.BENCH_CHECK_INVOCATIONS ?? 10);
const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'cli', 'baton.cjs');
const ESM_CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'cli', 'main.js');
const SQLITE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', 'better-sqlite3');
/** The compiled addon named directly, as Baton opens it (no `bindings` search). */
const ADDON = join(SQLITE, 'build', 'Release', 'better_sqlite3.node');

const { NODE_EXTRA_CA_CERTS, ...ENV_WITHOUT_EXTRA_CA } = process.env;

function timeCommand(args, check, env = process.env) {
  const start = now();
  const result = spawnSync(process.execPath, args, { encoding: 'utf8', env });
  const ms = now() - start;
  check?.(result);
  return ms;
}

const home = tempHome('check');
try {
  const store = openStore(home.dbPath);
  const ids = await createRuns(store, chainPlan('bench-check', 3), 5, home.dir);
  await new Engine({ store, executors: noopExecutors(), home: home.dir, owner: 'bench' }).run({
    kind: 'drain',
  });
  const runs = await store.listRuns();
  await store.close();
  assert(
    runs.length === ids.length && runs.every((r) => r.status === 'succeeded'),
    'setup runs did not all succeed',
  );

  const checkOk = (result) =>
    assert(
      result.status === 0 && result.stdout.includes('nothing due'),
      `baton check exited ${result.status}: ${result.stdout}${result.stderr}`,
    );
  const check = (env, cli = CLI) => timeCommand([cli, 'check', '--home', home.dir], checkOk, env);
  const bare = (env) => timeCommand(['-e', '0'], (r) => assert(r.status === 0, 'node -e 0 failed'), env);
  const sqliteScript = `const D = require(${JSON.stringify(SQLITE)}); const db = new D(${JSON.stringify(home.dbPath)}, { fileMustExist: true, nativeBinding: ${JSON.stringify(ADDON)} }); db.prepare("SELECT value FROM baton_meta WHERE key = 'schema_version'").get(); db.close();`;
  const sqlite = () =>
    timeCommand(['-e', sqliteScript], (r) => assert(r.status === 0, `sqlite floor failed: ${r.stderr}`));
  // One warm-up of each (file cache), then interleaved so machine noise hits both alike.
  check();
  check(process.env, ESM_CLI);
  bare();
  sqlite();
  const checkMs = [];
  const checkEsmMs = [];
  const nodeMs = [];
  const sqliteMs = [];
  const checkNoCaMs = [];
  const nodeNoCaMs = [];
  for (let i = 0; i < INVOCATIONS; i++) {
    checkMs.push(check());
    checkEsmMs.push(check(process.env, ESM_CLI));
    nodeMs.push(bare());
    sqliteMs.push(sqlite());
    checkNoCaMs.push(check(ENV_WITHOUT_EXTRA_CA));
    nodeNoCaMs.push(bare(ENV_WITHOUT_EXTRA_CA));
  }
  emit({
    invocations: INVOCATIONS,
    checkMs: median(checkMs),
    checkMinMs: Math.min(...checkMs),
    checkEsmEntryMs: median(checkEsmMs),
    nodeMs: median(nodeMs),
    nodeMinMs: Math.min(...nodeMs),
    sqliteFloorMs: median(sqliteMs),
    // Baton's own share: check minus the bare node start that preceded it, pair by pair.
    overNodeMs: median(checkMs.map((ms, i) => ms - nodeMs[i])),
    extraCaCerts: NODE_EXTRA_CA_CERTS !== undefined,
    checkNoExtraCaMs: median(checkNoCaMs),
    nodeNoExtraCaMs: median(nodeNoCaMs),
  });
} finally {
  home.dispose();
}
