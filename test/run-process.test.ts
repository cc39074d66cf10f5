import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { killProcessGroup, type RunProcessOptions, runProcess } from '../src/executors/run-process.js';
import { isAlive } from './helpers/cli.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'baton-run-process-'));
let counter = 0;

afterAll(() => rmSync(root, { recursive: true, force: true }));

function fixture(name: string, ...args: string[]): string[] {
  return [process.execPath, join(fixtures, name), ...args];
}

function options(argv: readonly string[], extra: Partial<RunProcessOptions> = {}): RunProcessOptions {
  counter += 1;
  return {
    argv,
    cwd: root,
    env: { ...process.env },
    // Only a bound for a child that would never end: a node fixture (20 MB of output included)
    // takes seconds to start and finish on a loaded machine.
    timeoutMs: 30_000,
    logPath: join(root, `logs-${counter}`, 'attempt.log'),
    ...extra,
  };
}

/** Whether `pid` is gone within 20 s: a generous deadline for a loaded machine, polled. */
async function waitUntilDead(pid: number): Promise<boolean> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return !isAlive(pid);
}

describe('runProcess', () => {
  it('captures exit code 0, stdout, and calls onSpawn with the pid', async () => {
    let spawnedPid: number | undefined;
    const result = await runProcess(
      options(fixture('agent-succeed.mjs', 'hello'), { onSpawn: (pid) => (spawnedPid = pid) }),
    );
    expect(result.exitCode).toBe(0);
    expect(result.signal).toBeNull();
    expect(result.timedOut).toBe(false);
    expect(result.aborted).toBe(false);
    expect(result.spawnError).toBeUndefined();
    expect(result.stdoutTail).toBe('ok: hello\n');
    expect(result.stdoutBytes).toBe(10);
    expect(result.stderrTail).toBe('');
    expect(spawnedPid).toBeGreaterThan(1);
  });

  it('runs the executable it is given while the child keeps argv[0] as written', async () => {
    // No file named like argv[0] exists: only the located executable can have run.
    const result = await runProcess(
      options(['baton-no-such-agent', '-p', 'process.argv0'], { executable: process.execPath }),
    );
    expect(result.spawnError).toBeUndefined();
    expect(result.exitCode).toBe(0);
    expect(result.stdoutTail).toBe('baton-no-such-agent\n');
  });

  it('starts nothing when the lookup found no executable, even if PATH has one by that name', async () => {
    // `node` is on PATH: a search by spawn would find and run it; null means nobody checked a file.
    const opts = options(['node', '-e', 'process.stdout.write("ran")'], { executable: null });
    const result = await runProcess(opts);
    expect(result.spawnError?.code).toBe('ENOENT');
    expect(result.spawnError?.message).toContain('"node" not found');
    expect(result.stdoutTail).toBe('');
    expect(readFileSync(opts.logPath, 'utf8')).toBe('');
  });

  it('captures a non-zero exit code and stderr; the log holds everything with mode 0600', async () => {
    const opts = options(fixture('agent-fail.mjs'), {
      env: { ...process.env, FAIL_EXIT_CODE: '3', FAIL_MESSAGE: 'bad thing' },
    });
    const result = await runProcess(opts);
    expect(result.exitCode).toBe(3);
    expect(result.stderrTail).toBe('bad thing\n');
    expect(result.stderrBytes).toBe(10);
    expect(result.logPath).toBe(opts.logPath);
    expect(readFileSync(opts.logPath, 'utf8')).toBe('bad thing\n');
    expect(statSync(opts.logPath).mode & 0o777).toBe(0o600);
  });

  it('writes stdout and stderr to the log in arrival order', async () => {
    const script =
      "process.stdout.write('one\\n'); setTimeout(() => { process.stderr.write('two\\n');" +
      " setTimeout(() => process.stdout.write('three\\n'), 50); }, 50);";
    const opts = options([process.execPath, '-e', script]);
    const result = await runProcess(opts);
    expect(readFileSync(opts.logPath, 'utf8')).toBe('one\ntwo\nthree\n');
    expect(result.stdoutTail).toBe('one\nthree\n');
    expect(result.stderrTail).toBe('two\n');
  });

  it('streams 20 MB to the log and keeps only the tail in memory', async () => {
    const opts = options(fixture('agent-print-lots.mjs'), {
      env: { ...process.env, PRINT_MB: '20' },
      tailBytes: 1000,
    });
    const result = await runProcess(opts);
    expect(result.exitCode).toBe(0);
    expect(statSync(opts.logPath).size).toBeGreaterThanOrEqual(20 * 1024 * 1024);
    expect(result.stdoutBytes).toBe(statSync(opts.logPath).size);
    expect(result.stdoutTail.length).toBeLessThanOrEqual(1000);
    expect(result.stdoutTail.endsWith('x\nEND\n')).toBe(true);
  });

  it('cuts the tail at a character boundary', async () => {
    const script = "process.stdout.write('é'.repeat(10))"; // 20 bytes, 2 per character
    const result = await runProcess(options([process.execPath, '-e', script], { tailBytes: 5 }));
    expect(result.stdoutBytes).toBe(20);
    expect(result.stdoutTail).toBe('éé');
  });

  it('on timeout kills the whole process group, TERM then KILL', async () => {
    const pidFile = join(root, `grandchild-${counter}.pid`);
    const result = await runProcess(
      options(fixture('agent-hang.mjs'), {
        env: { ...process.env, HANG_CHILD_PIDFILE: pidFile, HANG_IGNORE_TERM: '1' },
        timeoutMs: 500,
        killGraceMs: 300,
      }),
    );
    expect(result.timedOut).toBe(true);
    expect(result.aborted).toBe(false);
    // On a loaded machine the fixture may not have reached its SIGTERM handler, its output or its
    // grandchild within 500 ms; the abort test below checks those deterministically.
    expect(['SIGKILL', 'SIGTERM']).toContain(result.signal);
    expect(result.exitCode).toBeNull();
    expect(result.durationMs).toBeGreaterThanOrEqual(490);
    if (existsSync(pidFile)) {
      expect(await waitUntilDead(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
    }
  });

  it('on abort sends SIGTERM to the group, then SIGKILL to what ignores it', async () => {
    const controller = new AbortController();
    const pidFile = join(root, `grandchild-abort-${counter}.pid`);
    const promise = runProcess(
      options(fixture('agent-hang.mjs'), {
        env: { ...process.env, HANG_CHILD_PIDFILE: pidFile, HANG_IGNORE_TERM: '1' },
        killGraceMs: 300,
        signal: controller.signal,
      }),
    );
    // The fixture ignores SIGTERM before it writes the pid file.
    const deadline = Date.now() + 20_000;
    while (!existsSync(pidFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const abortedAt = Date.now();
    controller.abort();
    const result = await promise;
    expect(Date.now() - abortedAt).toBeGreaterThanOrEqual(290);
    expect(result.aborted).toBe(true);
    expect(result.timedOut).toBe(false);
    expect(result.signal).toBe('SIGKILL');
    expect(await waitUntilDead(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });

  it('on abort a child that honours SIGTERM ends at once', async () => {
    const controller = new AbortController();
    // The grace is far past the test's timeout: a run that waited it out (or SIGKILLed at its
    // end) would not return in time; one that returns ends with the child's SIGTERM.
    const result = await runProcess(
      options(fixture('agent-hang.mjs'), {
        killGraceMs: 600_000,
        signal: controller.signal,
        onSpawn: () => controller.abort(),
      }),
    );
    expect(result.aborted).toBe(true);
    expect(result.signal).toBe('SIGTERM');
  });

  it('does not start the child when the signal is already aborted', async () => {
    const markFile = join(root, `not-started-${randomBytes(4).toString('hex')}`);
    const script = `require('fs').writeFileSync(${JSON.stringify(markFile)}, 'ran')`;
    const result = await runProcess(
      options([process.execPath, '-e', script], { signal: AbortSignal.abort() }),
    );
    expect(result.aborted).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(existsSync(markFile)).toBe(false);
  });

  it('does not hang when a grandchild keeps stdout open after the child exits', async () => {
    const pidFile = join(root, `orphan-${counter}.pid`);
    const script = `
      const { spawn } = require('child_process');
      const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'inherit' });
      require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(g.pid));
      process.stdout.write('parent done\\n');
      process.exit(0);
    `;
    // The timeout is far past the test's: only the child's exit can end this run in time.
    const result = await runProcess(options([process.execPath, '-e', script], { timeoutMs: 600_000 }));
    expect(result.exitCode).toBe(0);
    expect(result.timedOut).toBe(false);
    expect(result.stdoutTail).toBe('parent done\n');
    expect(await waitUntilDead(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });

  it('reports ENOENT for a missing executable without rejecting', async () => {
    const result = await runProcess(options([`baton-no-such-binary-${randomBytes(4).toString('hex')}`]));
    expect(result.spawnError?.code).toBe('ENOENT');
    expect(result.spawnError?.message).toContain('not found');
    expect(result.exitCode).toBeNull();
    expect(result.timedOut).toBe(false);
  });

  it('reports EACCES for a file that is not executable', async () => {
    const result = await runProcess(options([join(fixtures, '..', 'run-process.test.ts')]));
    expect(result.spawnError?.code).toBe('EACCES');
    expect(result.exitCode).toBeNull();
  });

  it('names the working directory when it does not exist', async () => {
    const result = await runProcess(
      options(fixture('agent-succeed.mjs'), { cwd: join(root, 'no-such-dir') }),
    );
    expect(result.spawnError?.code).toBe('ENOENT');
    expect(result.spawnError?.message).toContain('no-such-dir');
  });

  it('closes stdin by default', async () => {
    const result = await runProcess(options(fixture('agent-stdin-wait.mjs')));
    expect(result.timedOut).toBe(false);
    expect(result.exitCode).toBe(0);
    expect(result.stdoutTail).toBe('stdin closed\n');
  });

  it('delivers stdinText and then closes stdin', async () => {
    const result = await runProcess(
      options(fixture('agent-echo-argv.mjs', 'a'), {
        env: { ...process.env, READ_STDIN: '1' },
        stdinText: 'the prompt\nline two',
      }),
    );
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdoutTail)).toEqual({ argv: ['a'], stdin: 'the prompt\nline two' });
  });

  it('passes shell metacharacters as one literal argument', async () => {
    const pwned = `/tmp/pwned-${randomBytes(6).toString('hex')}`;
    const nasty = `$(touch ${pwned}); rm -rf ~ && echo "x" | cat > y; \`id\` '"`;
    const result = await runProcess(options(fixture('agent-echo-argv.mjs', nasty)));
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdoutTail)).toEqual([nasty]);
    expect(existsSync(pwned)).toBe(false);
    expect(existsSync(join(root, 'y'))).toBe(false);
  });

  it('rejects bad input', async () => {
    await expect(runProcess(options([]))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(runProcess(options(['node'], { timeoutMs: 0 }))).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});

describe('killProcessGroup', () => {
  it('returns false when the group does not exist', () => {
    // pid_max is at most 2^22 on Linux, so this group cannot exist.
    expect(killProcessGroup(2 ** 22 + 1, 'SIGTERM')).toBe(false);
  });

  it('refuses pids that would signal our own group or every process', () => {
    expect(() => killProcessGroup(0, 'SIGTERM')).toThrow(/pid must be an integer > 1/);
    expect(() => killProcessGroup(1, 'SIGTERM')).toThrow(/pid must be an integer > 1/);
  });
});
