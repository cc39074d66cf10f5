/**
 * The bwrap command of a confined attempt (mount order, the marker set inside), and one attempt run
 * through the real bwrap with the Baton home inside its workspace and a database file outside both.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAgentAttempt } from '../src/executors/agent-attempt.js';
import { confineCommand, probeSandbox } from '../src/executors/sandbox.js';
import { agentCommand, removeTempDirs, tempDir } from './helpers/cli.js';
import { describeWithBwrap } from './helpers/sandbox.js';

afterAll(() => removeTempDirs());

describe('confineCommand', () => {
  const dir = tempDir('baton-confine-argv-');
  const workspace = join(dir, 'work');
  const home = join(workspace, '.baton');
  const overlay = join(home, 'runs', 'r', 's', 'attempt-1.gemini_cli_home');
  mkdirSync(overlay, { recursive: true });
  const { argv, env } = confineCommand({
    bwrap: '/usr/bin/bwrap',
    hidden: [home],
    workspace,
    writable: [{ path: join(dir, 'user', '.gemini'), kind: 'dir' }],
    attemptPaths: [overlay],
    executable: '/usr/bin/gemini',
    argv: ['gemini', '-o', 'json', '--prompt=hi'],
    env: { PATH: '/usr/bin', BATON_RUN_ID: 'r', BATON_STEP_ID: 's', BATON_ATTEMPT: '1', KEEP: 'yes' },
    marker: ['BATON_RUN_ID=r', 'BATON_STEP_ID=s', 'BATON_ATTEMPT=1'],
  });
  const at = (...args: string[]) => argv.findIndex((_, i) => args.every((arg, j) => argv[i + j] === arg));

  it('mounts parents first: the workspace, then the home hidden inside it, then the attempt files inside that', () => {
    expect(at('--bind', workspace, workspace)).toBeGreaterThan(at('--tmpfs', '/tmp'));
    expect(at('--tmpfs', home)).toBeGreaterThan(at('--bind', workspace, workspace));
    expect(at('--bind', overlay, overlay)).toBeGreaterThan(at('--tmpfs', home));
    expect(at('--remount-ro', home)).toBeGreaterThan(at('--bind', overlay, overlay));
    expect(at('--bind', join(dir, 'user', '.gemini'), join(dir, 'user', '.gemini'))).toBeGreaterThan(0);
  });

  it('runs the checked program with its arguments, in new namespaces and session, dying with bwrap', () => {
    expect(argv.slice(argv.indexOf('--'))).toEqual(['--', '/usr/bin/gemini', '-o', 'json', '--prompt=hi']);
    for (const flag of [
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--die-with-parent',
      '--new-session',
    ])
      expect(argv).toContain(flag);
    expect(argv).not.toContain('--unshare-net');
    expect(argv.slice(at('--chdir'), at('--chdir') + 2)).toEqual(['--chdir', workspace]);
  });

  it('sets the marker inside, not on bwrap itself (whose SIGTERM would kill the agent at once)', () => {
    expect(env.BATON_RUN_ID).toBeUndefined();
    expect(env.KEEP).toBe('yes');
    expect(at('--setenv', 'BATON_RUN_ID', 'r')).toBeGreaterThan(0);
    expect(at('--setenv', 'BATON_ATTEMPT', '1')).toBeGreaterThan(0);
  });
});

describeWithBwrap('a confined attempt through the real bwrap', () => {
  it('hides a home inside the workspace and a database file outside it; the workspace stays writable', async () => {
    const dir = tempDir('baton-confine-run-');
    const workspace = join(dir, 'work');
    const home = join(workspace, '.baton');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'baton.db'), 'secret rows');
    const elsewhere = tempDir('baton-confine-db-');
    const db = join(elsewhere, 'other.db');
    writeFileSync(db, 'more secret rows');
    const probe = probeSandbox();
    if (!probe.ok) throw new Error(probe.problem);
    const run = (dbPath: string) =>
      runAgentAttempt({
        agent: { command: agentCommand('agent-escape'), promptVia: 'arg' },
        prompt: 'escape',
        workspace,
        requiredOutputs: ['escape-report.json'],
        env: {
          PATH: process.env.PATH,
          BATON_RUN_ID: 'r',
          BATON_STEP_ID: 's',
          BATON_ATTEMPT: '1',
          ESCAPE_OUTSIDE: join(dir, 'out.txt'),
          ESCAPE_READONLY: join(dir, 'out.txt'),
          ESCAPE_TMP: '/tmp/x',
          ESCAPE_DB: dbPath,
          ESCAPE_CONFIG: join(dir, 'out.txt'),
        },
        timeoutMs: 30_000,
        killGraceMs: 1000,
        logPath: join(home, 'runs', 'r', 's', 'attempt-1.log'),
        sandbox: { bwrap: probe.bwrap, hidden: [home, db] },
      });
    const inHome = await run(join(home, 'baton.db'));
    expect(inHome.ok, inHome.ok ? '' : inHome.message).toBe(true);
    expect(JSON.parse(readFileSync(join(workspace, 'escape-report.json'), 'utf8')).db).toEqual({
      ok: false,
      code: 'ENOENT',
    });
    const outside = await run(db);
    expect(outside.ok).toBe(true);
    expect(JSON.parse(readFileSync(join(workspace, 'escape-report.json'), 'utf8')).db.ok).toBe(false);
    // What Baton itself wrote stays: the attempt log in the hidden home, the database files.
    expect(readFileSync(join(home, 'runs', 'r', 's', 'attempt-1.log'), 'utf8')).toContain('"db"');
    expect(readFileSync(join(home, 'baton.db'), 'utf8')).toBe('secret rows');
  }, 60_000);
});
