/**
 * One way to find the Baton home, for every command: `--home`, else BATON_HOME, else the nearest
 * `.baton` folder from the current directory upward (as git finds `.git`), else `./.baton`, which
 * only commands that write create. Real `baton` processes in real folders.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectExit, removeTempDirs, runBaton, tempDir, writePlan } from './helpers/cli.js';
import { fixturePlan } from './helpers/plans.js';

afterAll(() => removeTempDirs());

describe('finding the Baton home', () => {
  it('read commands on a missing home say so and exit 2, creating nothing', async () => {
    const empty = tempDir('baton-nohome-');
    for (const args of [
      ['status'],
      ['timeline', 'r1'],
      ['logs', 'r1', 'a'],
      ['export', 'r1'],
      ['gc', '--older-than', '1d'],
      ['retry', 'r1', 'a'],
    ]) {
      const result = expectExit(await runBaton(args, { cwd: empty }), 2);
      expect(result.stderr).toMatch(
        /no Baton home found \(no --home or BATON_HOME, and no \.baton folder in .* or above it\)/,
      );
    }
    const typo = join(empty, 'hom');
    const result = expectExit(await runBaton(['status'], { cwd: empty, home: typo }), 2);
    expect(result.stderr).toContain(`${typo} (from --home) does not exist`);
    // No store, no limits: flow list says so without making one.
    expect(expectExit(await runBaton(['flow', 'list', '--json'], { cwd: empty }), 0).stdout.trim()).toBe(
      '[]',
    );
    expect(readdirSync(empty)).toEqual([]);
  });

  it('a check with no home finds nothing due, exit 0, and creates nothing', async () => {
    const empty = tempDir('baton-nohome-');
    const result = expectExit(await runBaton(['check'], { cwd: empty }), 0);
    expect(result.stdout).toBe('nothing due\n');
    expect(readdirSync(empty)).toEqual([]);
  });

  it('init makes the home; every command in the project folders finds it, from any depth', async () => {
    const project = tempDir('baton-project-');
    const init = expectExit(await runBaton(['init', project], { cwd: project }), 0);
    const home = join(project, '.baton');
    expect(existsSync(home)).toBe(true);
    // The heartbeat line carries the absolute home: it works from any folder.
    expect(init.stdout).toContain(`baton check --quiet --home ${home}`);
    const deep = join(project, 'src', 'deep');
    mkdirSync(deep, { recursive: true });
    const plan = writePlan(project, fixturePlan([{ id: 'a', instruction: 'hi' }]));
    expectExit(await runBaton(['run', plan, '--detach', '--id', 'found'], { cwd: deep }), 0);
    expect(existsSync(join(home, 'baton.db'))).toBe(true);
    expect(existsSync(join(deep, '.baton'))).toBe(false);
    const status = expectExit(await runBaton(['status', '--json'], { cwd: join(project, 'src') }), 0);
    expect(JSON.parse(status.stdout).map((run: { id: string }) => run.id)).toEqual(['found']);
    // From elsewhere, the heartbeat's absolute --home drives the run.
    const elsewhere = tempDir('baton-elsewhere-');
    expectExit(await runBaton(['check', '--quiet', '--home', home], { cwd: elsewhere }), 0);
    const done = expectExit(
      await runBaton(['status', 'found', '--json', '--home', home], { cwd: elsewhere }),
      0,
    );
    expect(JSON.parse(done.stdout).status).toBe('succeeded');
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('BATON_HOME wins over the search; --home wins over BATON_HOME', async () => {
    const project = tempDir('baton-project-');
    mkdirSync(join(project, '.baton'));
    const other = tempDir('baton-other-');
    const plan = writePlan(project, fixturePlan([{ id: 'a', instruction: 'hi' }]));
    expectExit(
      await runBaton(['run', plan, '--detach', '--id', 'env'], { cwd: project, env: { BATON_HOME: other } }),
      0,
    );
    expect(existsSync(join(other, 'baton.db'))).toBe(true);
    expect(existsSync(join(project, '.baton', 'baton.db'))).toBe(false);
    const flag = tempDir('baton-flag-');
    expectExit(
      await runBaton(['run', plan, '--detach', '--id', 'flag'], {
        cwd: project,
        home: flag,
        env: { BATON_HOME: other },
      }),
      0,
    );
    expect(existsSync(join(flag, 'baton.db'))).toBe(true);
  });
});
