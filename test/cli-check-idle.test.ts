/**
 * `baton check` answers "nothing due" from a single read when there is nothing to do, and hands
 * everything else to the full check: due steps, leases that ran out, hook calls owed, blocked
 * runs, a database of an older schema, bad settings.
 */

import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { latestMigrationVersion } from '../src/store/schema-migration-files.js';
import { SQLITE_SCHEMA_VERSION } from '../src/store/schema-tables.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import {
  cliPath,
  esmCliPath,
  expectExit,
  removeTempDirs,
  repoRoot,
  runBaton,
  spawnBaton,
  writePlan,
} from './helpers/cli.js';
import { claimAsWorker, fixturePlan, planDir } from './helpers/plans.js';

afterAll(() => removeTempDirs());

/**
 * An empty store made by the `baton` command (a check with nothing to do makes none): a flow
 * limit set and removed, through the given entry point.
 */
async function makeStore(home: string, options: { cli?: string } = {}): Promise<void> {
  expectExit(await runBaton(['flow', 'set', 'init', '--concurrency', '1', '--home', home], options), 0);
  expectExit(await runBaton(['flow', 'rm', 'init', '--home', home], options), 0);
}

describe('baton check with nothing to do', () => {
  it('says nothing due (text and JSON) and exits 0, and refuses bad settings as the full check does', async () => {
    const { home } = planDir('baton-idle-');
    // The first check creates the database (the full path); the next ones take the idle path.
    await makeStore(home);
    const text = expectExit(await runBaton(['check', '--home', home]), 0);
    expect(text.stdout).toBe('nothing due\n');
    const json = expectExit(await runBaton(['check', '--home', home, '--json']), 0);
    expect(JSON.parse(json.stdout)).toEqual({
      attemptsStarted: 0,
      attemptsCommitted: 0,
      attemptsDiscarded: 0,
      reclaimed: 0,
      scheduleRunsStarted: 0,
      scheduleSlotsLeft: false,
      blocked: [],
      waiting: [],
      toolApprovals: [],
    });
    expect(expectExit(await runBaton(['check', '--home', home, '--quiet']), 0).stdout).toBe('');
    const bad = expectExit(await runBaton(['check', '--home', home], { env: { BATON_LEASE_MS: '5' } }), 2);
    expect(bad.stderr).toMatch(/BATON_LEASE_MS 5: a lease must be from 100ms to 24h/);
  });

  it('exits 0 quietly when whoever reads its output has gone (`baton check | head -0`)', async () => {
    const { home } = planDir('baton-idle-');
    await makeStore(home);
    // The read end of stdout is closed before the check writes "nothing due": EPIPE, not a crash.
    const check = spawnBaton(['check', '--home', home]);
    check.child.stdout!.destroy();
    expect((await check.exited).code).toBe(0);
    expect(check.stderr()).toBe('');
  });

  it('runs a due step, reclaims a lease that ran out, and reports a blocked run', async () => {
    const { dir, home } = planDir('baton-idle-');
    const plan = writePlan(dir, fixturePlan([{ id: 'a', instruction: 'go' }]));
    expectExit(await runBaton(['run', plan, '--detach', '--id', 'due', '--home', home]), 0);
    const ran = expectExit(await runBaton(['check', '--home', home, '--json']), 0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ attemptsStarted: 1, attemptsCommitted: 1 });

    // A worker that died holding a lease: the lease ran out, so check reclaims and reruns it.
    expectExit(await runBaton(['run', plan, '--detach', '--id', 'lost', '--home', home]), 0);
    const claimed = await claimAsWorker(home, 'dead-worker', 1);
    expect(claimed.map((c) => c.runId)).toEqual(['lost']);
    const reclaimed = expectExit(await runBaton(['check', '--home', home, '--json']), 0);
    expect(JSON.parse(reclaimed.stdout)).toMatchObject({ reclaimed: 1 });

    const failing = writePlan(
      dir,
      fixturePlan([{ id: 'x', instruction: 'fail', retry: { maxAttempts: 1 } }], {}, 'agent-fail'),
      { name: 'fail.yaml' },
    );
    expectExit(await runBaton(['run', failing, '--detach', '--id', 'blk', '--home', home]), 0);
    expectExit(await runBaton(['check', '--home', home]), 1);
    // Nothing is due any more, but the blocked run is still reported on every check.
    const again = expectExit(await runBaton(['check', '--home', home]), 1);
    expect(again.stdout).toMatch(/BLOCKED run blk/);
  });

  it('leaves a damaged database and files readable by others to the full check', async () => {
    const { home } = planDir('baton-idle-');
    const path = join(home, 'baton.db');
    await makeStore(home);
    // Readable by others (restored from a backup with umask 022): the full open makes it 0600 again.
    chmodSync(path, 0o644);
    expectExit(await runBaton(['check', '--home', home]), 0);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    // Metadata damaged: refused (exit 2) as the full open refuses it, never "nothing due".
    const db = new Database(path);
    db.exec("DELETE FROM baton_meta WHERE key = 'app'");
    db.close();
    const damaged = expectExit(await runBaton(['check', '--home', home]), 2);
    expect(damaged.stderr).toMatch(/metadata is damaged/);
  });

  it('upgrades a database of an older schema (the full check runs)', async () => {
    const { home } = planDir('baton-idle-');
    const path = join(home, 'baton.db');
    const store = SqliteStore.open(path);
    const plan = validatePlanObject({ name: 'p', steps: [{ id: 's', fn: 'noop' }] }, 'p');
    await store.createRun({ id: 'r', plan, planHash: 'h', inputs: {}, workspace: home, now: 1 });
    await store.cancelRun('r', 2);
    await store.close();
    const db = new Database(path);
    db.exec(`DROP INDEX steps_stopping_flow; DROP INDEX runs_by_created; DROP TABLE run_counts;
      DROP TRIGGER run_counts_insert; DROP TRIGGER run_counts_update; DROP TRIGGER run_counts_delete; ALTER TABLE steps DROP COLUMN flow_key;
      ALTER TABLE steps DROP COLUMN interruptions;
      DROP INDEX steps_waiting_for; ALTER TABLE steps DROP COLUMN waiting_for; DROP TABLE wait_events; DROP INDEX hook_deliveries_failed;
      DROP TABLE flow_limits; DROP TABLE schedule_slots; DROP TABLE schedules;
      DROP TABLE run_labels; DROP TABLE trigger_deliveries; DROP TABLE triggers; DROP INDEX steps_claim; ALTER TABLE steps DROP COLUMN claim_rank;
      UPDATE baton_meta SET value = '3' WHERE key = 'schema_version';`);
    db.close();
    expect(expectExit(await runBaton(['check', '--home', home]), 0).stdout).toBe('nothing due\n');
    const after = new Database(path, { readonly: true });
    expect(after.prepare("SELECT value FROM baton_meta WHERE key = 'schema_version'").pluck().get()).toBe(
      String(SQLITE_SCHEMA_VERSION),
    );
    after.close();
  });
});

describe('the baton command and the ES module entry', () => {
  it('answers an idle check from the bundled launcher alone, without the rest of the CLI', async () => {
    const { home } = planDir('baton-idle-');
    await makeStore(home);
    // A copy of the launcher with no CLI beside it (inside the repository, so that it finds
    // better-sqlite3): the idle answer must not need run-cli.js...
    const alone = mkdtempSync(join(repoRoot, 'dist', 'launcher-test-'));
    try {
      copyFileSync(cliPath, join(alone, 'baton.cjs'));
      const cli = join(alone, 'baton.cjs');
      const idle = expectExit(await runBaton(['check', '--home', home], { cli }), 0);
      expect(idle.stdout).toBe('nothing due\n');
      // --home is a global option: before the command it takes the same path.
      for (const args of [
        ['--home', home, 'check'],
        [`--home=${home}`, 'check', '--quiet'],
      ]) {
        expect(expectExit(await runBaton(args, { cli }), 0).stdout).toBe(
          args.includes('--quiet') ? '' : 'nothing due\n',
        );
      }
      // ...and anything else loads it (missing here, so the copy fails where the real one works).
      const other = await runBaton(['status', '--home', home], { cli });
      expect(other.code).toBe(1);
      expect(other.stderr).toMatch(/^baton: internal error: .*run-cli\.js/);
    } finally {
      rmSync(alone, { recursive: true, force: true });
    }
    expect(readFileSync(cliPath, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(statSync(cliPath).mode & 0o111).not.toBe(0);
  });

  it('answers from the launcher alone while steps wait whose timeouts have not come, as the full check does', async () => {
    const { dir, home } = planDir('baton-idle-');
    const plan = writePlan(
      dir,
      fixturePlan(
        [
          { id: 'draft', instruction: 'write the report' },
          {
            id: 'ask',
            dependsOn: ['draft'],
            wait: { for: 'approval', prompt: 'Send the report for {{inputs.day}}?', timeout: '24h' },
          },
          { id: 'ci', wait: { for: 'event', event: 'ci green', timeout: '24h' } },
        ],
        { inputs: { day: {} } },
      ),
    );
    // A secret of the operator's in the prompt: every answer masks it, the idle one too.
    const env = { BATON_SECRET_ENV: 'REPORT_TOKEN', REPORT_TOKEN: 'tok-secret-4711' };
    const run = ['run', plan, '--detach', '--id', 'r1', '--home', home, '--input', 'day=tok-secret-4711'];
    expectExit(await runBaton(run, { env }), 0);
    // The first check runs draft; both waits start waiting, their timeouts a day away.
    expectExit(await runBaton(['check', '--home', home], { env }), 0);
    const alone = mkdtempSync(join(repoRoot, 'dist', 'launcher-test-'));
    try {
      copyFileSync(cliPath, join(alone, 'baton.cjs'));
      const cli = join(alone, 'baton.cjs');
      // No CLI beside this copy: an answer at all means the idle read gave it.
      for (const flags of [[], ['--json'], ['--quiet']]) {
        const args = ['check', '--home', home, ...flags];
        const idle = expectExit(await runBaton(args, { cli, env }), 0);
        const full = expectExit(await runBaton(args, { cli: esmCliPath, env }), 0);
        expect(idle.stdout).toBe(full.stdout);
        expect(idle.stdout).not.toContain('tok-secret-4711');
      }
      const text = expectExit(await runBaton(['check', '--home', home], { cli, env }), 0).stdout;
      expect(text).toContain(
        'WAITING run r1 (cli-test): ask waits for approval: Send the report for [redacted]?',
      );
      expect(text).toContain("  baton send 'ci green' --run r1 --data '<json>'");
    } finally {
      rmSync(alone, { recursive: true, force: true });
    }
  });

  it('gives the same answers through `node dist/cli/main.js`', async () => {
    const { dir, home } = planDir('baton-idle-');
    const esm = { cli: esmCliPath };
    await makeStore(home, esm);
    expect(expectExit(await runBaton(['check', '--home', home], esm), 0).stdout).toBe('nothing due\n');
    const plan = writePlan(dir, fixturePlan([{ id: 'a', instruction: 'go' }]));
    expectExit(await runBaton(['run', plan, '--detach', '--id', 'due', '--home', home], esm), 0);
    const ran = expectExit(await runBaton(['check', '--home', home, '--json'], esm), 0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ attemptsStarted: 1, attemptsCommitted: 1 });
    const bad = expectExit(await runBaton(['check', '--home', home, '--bogus'], esm), 2);
    expect(bad.stderr).toMatch(/unknown option '--bogus'/);
  });

  it('ends as the CLI does when stdout cannot be written: one internal error, exit 1, no second check', async () => {
    const { home } = planDir('baton-idle-');
    await makeStore(home);
    for (const cli of [cliPath, esmCliPath]) {
      const full = openSync('/dev/full', 'w');
      try {
        const result = spawnSync(process.execPath, [cli, 'check', '--home', home], {
          stdio: ['ignore', full, 'pipe'],
          encoding: 'utf8',
        });
        expect(result.status).toBe(1);
        expect(result.stderr).toMatch(/^baton: internal error: Error: ENOSPC/);
        expect(result.stderr.match(/^baton:/gm)).toHaveLength(1);
      } finally {
        closeSync(full);
      }
    }
  });

  it('opens SQLite when better-sqlite3 keeps its addon where only its own search finds it', async () => {
    // An install of Baton whose better-sqlite3 has its addon in build/Debug: the launcher's
    // bundled copy would search beside the bundle, so the installed package must be used.
    const pkg = mkdtempSync(join(tmpdir(), 'baton-pkg-'));
    try {
      cpSync(join(repoRoot, 'dist'), join(pkg, 'dist'), { recursive: true });
      copyFileSync(join(repoRoot, 'package.json'), join(pkg, 'package.json'));
      mkdirSync(join(pkg, 'node_modules'));
      for (const entry of readdirSync(join(repoRoot, 'node_modules'))) {
        if (entry !== 'better-sqlite3' && entry !== '.bin')
          symlinkSync(join(repoRoot, 'node_modules', entry), join(pkg, 'node_modules', entry));
      }
      const real = join(repoRoot, 'node_modules', 'better-sqlite3');
      const copy = join(pkg, 'node_modules', 'better-sqlite3');
      cpSync(join(real, 'lib'), join(copy, 'lib'), { recursive: true });
      copyFileSync(join(real, 'package.json'), join(copy, 'package.json'));
      mkdirSync(join(copy, 'build', 'Debug'), { recursive: true });
      copyFileSync(
        join(real, 'build', 'Release', 'better_sqlite3.node'),
        join(copy, 'build', 'Debug', 'better_sqlite3.node'),
      );
      const { home } = planDir('baton-idle-');
      const cli = join(pkg, 'dist', 'cli', 'baton.cjs');
      await makeStore(home, { cli });
      expect(expectExit(await runBaton(['check', '--home', home], { cli }), 0).stdout).toBe('nothing due\n');
      expect(expectExit(await runBaton(['status', '--home', home], { cli }), 0).stdout).toMatch(
        /no runs yet/,
      );
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
  });

  it('knows the schema version the SQLite migrations reach (the idle check compares with it)', () => {
    const dir = join(repoRoot, 'src', 'store', 'sqlite', 'migrations');
    expect(SQLITE_SCHEMA_VERSION).toBe(latestMigrationVersion(dir));
  });
});
