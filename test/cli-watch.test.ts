/**
 * Watching runs from the terminal through the real `baton`: `status --watch`, `timeline --watch`
 * and `logs -f` follow a run that a worker in another process drives (on SQLite and on a real
 * PostgreSQL cluster) and end with the right code when it settles; Ctrl-C ends them with 130.
 * Progress is driven by the gated fixture agent, which waits for a file the test writes: no sleeps.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type BatonProcess,
  expectExit,
  expectRefused,
  removeTempDirs,
  runBaton,
  spawnBaton,
  stopProcesses,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { fixturePlan, planDir } from './helpers/plans.js';
import { freshSchemaName, startPostgres, type TestPostgres } from './helpers/postgres.js';

let server: TestPostgres | undefined;

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterEach(async () => {
  await stopProcesses();
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

interface World {
  home: string;
  gates: string;
  store: string[];
  run(args: string[], env?: Record<string, string>): ReturnType<typeof runBaton>;
  spawn(args: string[], env?: Record<string, string>): BatonProcess;
}

/** A plan of gated steps stored as run `r`, on SQLite or on PostgreSQL. */
async function world(steps: object[], options: { postgres?: boolean; retry?: object } = {}): Promise<World> {
  const { dir, home } = planDir('baton-watch-');
  const gates = join(dir, 'gates');
  mkdirSync(gates);
  const store = options.postgres ? ['--store', `${server!.url}?schema=${freshSchemaName('w')}`] : [];
  const extra = options.retry ? { defaults: { retry: options.retry } } : {};
  const file = writePlan(dir, fixturePlan(steps, extra, 'agent-gated'));
  const w: World = {
    home,
    gates,
    store,
    run: (args, env = {}) => runBaton([...store, ...args], { home, cwd: dir, env }),
    spawn: (args, env = {}) => spawnBaton([...store, ...args], { home, cwd: dir, env }),
  };
  expectExit(await w.run(['run', file, '--id', 'r', '--detach']), 0);
  return w;
}

const open = (w: World, attempt: number) => writeFileSync(join(w.gates, String(attempt)), '');
const worker = (w: World, env: Record<string, string> = {}) =>
  w.spawn(['worker', '--quiet'], { GATE_DIR: w.gates, ...env });

/** The snapshots a piped `status --watch` printed, each starting with its `run r` line. */
const snapshotsOf = (proc: BatonProcess) =>
  proc
    .stdout()
    .trimEnd()
    .split(/\n\n(?=run r {2})/);

async function ended(proc: BatonProcess): Promise<number | null> {
  const { code, signal } = await proc.exited;
  if (code === null)
    throw new Error(`exited by ${signal}\nstdout: ${proc.stdout()}\nstderr: ${proc.stderr()}`);
  return code;
}

describe('status --watch and timeline --watch', () => {
  it('follow a run a worker in another process drives, and exit 0 when it succeeds (SQLite)', async () => {
    const w = await world([
      { id: 'fetch', title: '下载数据', instruction: 'fetch' },
      { id: 'report', instruction: 'report', dependsOn: ['fetch'] },
    ]);
    const status = w.spawn(['status', 'r', '--watch']);
    const timeline = w.spawn(['timeline', 'r', '--watch']);
    await waitFor(() => /fetch\s+下载数据\s+ready/.test(status.stdout()), 20_000, 'the first snapshot');
    const driver = worker(w);
    await waitFor(() => /fetch\s+下载数据\s+running/.test(status.stdout()), 20_000, 'fetch running');
    await waitFor(
      () => /fetch\s+1\s+started by/.test(timeline.stdout()),
      20_000,
      'the start in the timeline',
    );
    open(w, 1);
    expect(await ended(status)).toBe(0);
    expect(await ended(timeline)).toBe(0);
    driver.child.kill('SIGTERM');

    // Piped: one whole snapshot per change, no cursor codes, the last one the settled run.
    const snapshots = snapshotsOf(status);
    expect(snapshots.length).toBeGreaterThanOrEqual(3);
    expect(snapshots[0]).toMatch(/^run r {2}plan cli-test {2}running {2}0\/2 steps done/);
    expect(snapshots.at(-1)).toMatch(/^run r {2}plan cli-test {2}succeeded {2}2\/2 steps done/);
    expect(snapshots.at(-1)).toMatch(/report\s+report\s+succeeded\s+1/);
    expect(status.stdout()).not.toContain('\x1b');

    // The timeline: its header once, rows appended as they happened, aligned, then the chart.
    const out = timeline.stdout();
    expect(out).not.toContain('\x1b');
    const [header, ...rest] = out.split('\n');
    expect(header).toMatch(/^TIME\s+\+ELAPSED\s+STEP\s+ATTEMPT\s+DURATION\s+EVENT$/);
    const rows = rest.slice(0, rest.indexOf(''));
    const what = (row: string) =>
      row
        .slice(header!.indexOf('EVENT'))
        .replace(/[:(].*$/, '')
        .replace(/ by .*$/, '');
    expect(rows.map(what)).toEqual([
      'run created',
      'started',
      'succeeded',
      'started',
      'succeeded',
      'run succeeded',
    ]);
    for (const row of rows) expect(row[header!.indexOf('EVENT') - 1]).toBe(' ');
    expect(out).toMatch(/\nfetch +\|[█ ]+\| 1 attempt\n/);
  }, 40_000);

  it('on PostgreSQL: exit 1 with the blocked step and its hints when the run ends blocked', async () => {
    const w = await world([{ id: 'work', instruction: 'work' }], {
      postgres: true,
      retry: { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 10 },
    });
    const status = w.spawn(['status', 'r', '--watch']);
    const timeline = w.spawn(['timeline', 'r', '--watch']);
    const logs = w.spawn(['logs', 'r', 'work', '-f']);
    await waitFor(() => /work\s+ready/.test(status.stdout()), 20_000, 'the first snapshot');
    const driver = worker(w, { GATED_FAILS: '9' });
    await waitFor(() => /work\s+running/.test(status.stdout()), 20_000, 'work running');
    // Started late, logs -f would begin with the attempt running then (it follows the latest).
    await waitFor(
      () => logs.stderr().includes('# r work attempt 1: running'),
      20_000,
      'logs -f on attempt 1',
    );
    open(w, 1);
    open(w, 2);
    expect(await ended(status)).toBe(1);
    expect(await ended(timeline)).toBe(1);
    expect(await ended(logs)).toBe(1);
    driver.child.kill('SIGTERM');
    const last = snapshotsOf(status).at(-1)!;
    expect(last).toMatch(/^run r {2}plan cli-test {2}blocked/);
    expect(last).toContain('baton retry r work');
    expect(timeline.stdout()).toMatch(/work\s+2\s+\S+ (ms|s)\s+failed \(agent_failed\)/);
    expect(timeline.stdout()).toMatch(/blocked \(agent_failed\)/);
    expect(logs.stdout()).toBe('attempt 1 begins\nattempt 1 ends\nattempt 2 begins\nattempt 2 ends\n');
    expect(logs.stderr()).toMatch(/# r work attempt 2: failed \(agent_failed\)/);
  }, 40_000);
});

describe('logs -f', () => {
  it('prints lines as the running agent appends them, then the next attempt, and ends with the step', async () => {
    const w = await world([{ id: 'work', instruction: 'work' }]);
    const logs = w.spawn(['logs', 'r', 'work', '--follow']);
    await waitFor(() => logs.stderr().includes('is due now'), 20_000, 'the wait for a worker');
    const driver = worker(w, { GATED_FAILS: '1' });
    await waitFor(() => logs.stdout().includes('attempt 1 begins\n'), 20_000, 'the first line of attempt 1');
    // The agent waits at its gate: what it printed so far is all there is.
    expect(logs.stdout()).toBe('attempt 1 begins\n');
    expect(logs.stderr()).toContain('# r work attempt 1: running\n');
    open(w, 1);
    await waitFor(() => logs.stdout().includes('attempt 2 begins\n'), 20_000, 'attempt 2');
    expect(logs.stderr()).toMatch(
      // The retry's wait (10 ms) is said only when a poll falls into it.
      /# r work attempt 1: failed \(agent_failed\)[^\n]*\n(# attempt 2 of work is due [^\n]+\n)?# r work attempt 2: running\n/,
    );
    open(w, 2);
    expect(await ended(logs)).toBe(0);
    driver.child.kill('SIGTERM');
    expect(logs.stdout()).toBe('attempt 1 begins\nattempt 1 ends\nattempt 2 begins\nattempt 2 ends\n');
    expect(logs.stderr()).toMatch(/# r work attempt 2: succeeded\n$/);
  }, 40_000);
});

describe('ending and refusing a watch', () => {
  it('Ctrl-C ends status --watch, timeline --watch and logs -f with 130', async () => {
    const w = await world([{ id: 'work', instruction: 'work' }]);
    const watches = [
      w.spawn(['status', 'r', '--watch']),
      w.spawn(['timeline', 'r', '--watch']),
      w.spawn(['logs', 'r', 'work', '-f']),
    ];
    await waitFor(() => watches[0]!.stdout().includes('work'), 20_000, 'the status snapshot');
    await waitFor(() => watches[1]!.stdout().includes('run created'), 20_000, 'the timeline');
    await waitFor(() => watches[2]!.stderr().includes('is due now'), 20_000, 'the log follow');
    for (const watch of watches) watch.child.kill('SIGINT');
    for (const watch of watches) {
      expect(await ended(watch)).toBe(130);
      expect(watch.stderr()).not.toMatch(/internal error|\n\s+at /);
    }
  }, 30_000);

  it('refuses --watch without a run and --follow with --json (exit 2)', async () => {
    const w = await world([{ id: 'work', instruction: 'work' }]);
    expectRefused(await w.run(['status', '--watch']), 'status --watch follows one run');
    expectRefused(await w.run(['logs', 'r', 'work', '-f', '--json']), 'give one of them');
    expectRefused(await w.run(['logs', 'r', 'work', '-f', '--attempt', '3']), 'has started 0 attempt(s)');
  }, 30_000);
});
