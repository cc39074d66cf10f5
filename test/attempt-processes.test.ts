/**
 * No process of an attempt outlives it: descendants that moved to process groups of their own (as
 * claude's Bash tool and gemini's shell tool do), that ignore SIGTERM, or whose parent died, are
 * found by the attempt's marker in /proc and stopped. Real processes, checked through /proc.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stopOrphanedAttempt } from '../src/engine/orphans.js';
import {
  attemptMarker,
  findMarkedProcesses,
  stopMarkedProcesses,
} from '../src/executors/attempt-processes.js';
import { runProcess } from '../src/executors/run-process.js';
import { isAlive } from './helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'baton-attempt-processes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const onLinux = existsSync('/proc/self/environ');

/**
 * A script that starts a grandchild in a session of its own (setsid: its own process group, like
 * an agent's shell tool), which ignores SIGTERM and writes its pid, then, unless `stay`, exits.
 */
function treeScript(pidFile: string, stay: boolean): string {
  const grandchild = `process.on('SIGTERM', () => {}); require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1 << 30);`;
  return `
    const { spawn } = require('child_process');
    const g = spawn(process.execPath, ['-e', ${JSON.stringify(grandchild)}], { detached: true, stdio: 'ignore' });
    g.unref();
    const fs = require('fs');
    // Written, not only created: the grandchild's writeFileSync creates the file before it writes.
    const written = () => fs.existsSync(${JSON.stringify(pidFile)}) && fs.readFileSync(${JSON.stringify(pidFile)}, 'utf8') !== '';
    const wait = () => written() ? ${stay ? 'setInterval(() => {}, 1 << 30)' : 'process.exit(0)'} : setTimeout(wait, 10);
    wait();
  `;
}

function markerEnv() {
  const runId = `run-${randomBytes(6).toString('hex')}`;
  const env = { ...process.env, BATON_RUN_ID: runId, BATON_STEP_ID: 'tool', BATON_ATTEMPT: '1' };
  return { env, marker: attemptMarker(runId, 'tool', 1) };
}

/** Runs treeScript under runProcess; `marker` makes runProcess stop what carries it. */
interface ScriptOptions {
  env: NodeJS.ProcessEnv;
  marker?: readonly string[];
  signal?: AbortSignal;
  killGraceMs?: number;
}

/** `node -e script` as an attempt's process, with its own log. */
function runScript(script: string, options: ScriptOptions) {
  return runProcess({
    argv: [process.execPath, '-e', script],
    cwd: root,
    env: options.env,
    timeoutMs: 60_000,
    killGraceMs: options.killGraceMs ?? 200,
    logPath: join(root, `${randomBytes(4).toString('hex')}.log`),
    ...(options.marker ? { marker: options.marker } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

function runTree(options: ScriptOptions & { pidFile: string; stay?: boolean }) {
  return runScript(treeScript(options.pidFile, options.stay ?? false), options);
}

/** An attempt (marked) whose child left a detached grandchild running: its env, marker and pid. */
async function leftGrandchild() {
  const { env, marker } = markerEnv();
  const pidFile = pidFileName();
  await runTree({ env, pidFile });
  return { env, marker, grandchild: Number(readFileSync(pidFile, 'utf8')) };
}

const pidFileName = () => join(root, `g-${randomBytes(4).toString('hex')}`);
/** The pid file has its pid (writeFileSync creates the file before it writes it). */
const pidWritten = (pidFile: string) => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '';

async function until(condition: () => boolean, withinMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return condition();
}

describe.skipIf(!onLinux)('the processes of an attempt (Linux /proc)', () => {
  it('finds a descendant in a group of its own by the marker, and stops it despite SIGTERM being ignored', async () => {
    const { env, marker } = markerEnv();
    const pidFile = pidFileName();
    const result = await runTree({ env, pidFile, marker });
    expect(result.exitCode).toBe(0);
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    // Nothing carrying the marker is left once runProcess has reported.
    expect(findMarkedProcesses(marker)).toEqual([]);
    expect(isAlive(grandchild)).toBe(false);
  });

  it('without the marker, such a descendant survives its parent (what the marker is for)', async () => {
    const { marker, grandchild } = await leftGrandchild();
    expect(findMarkedProcesses(marker)).toEqual([grandchild]);
    expect(await stopMarkedProcesses(marker, 200)).toBe(1);
    expect(await until(() => !isAlive(grandchild))).toBe(true);
  });

  it('on timeout the agent and its detached descendant are both stopped', async () => {
    const { env, marker } = markerEnv();
    const pidFile = pidFileName();
    const controller = new AbortController();
    const running = runTree({ env, pidFile, stay: true, marker, signal: controller.signal });
    expect(await until(() => pidWritten(pidFile))).toBe(true);
    controller.abort();
    const result = await running;
    expect(result.aborted).toBe(true);
    expect(findMarkedProcesses(marker)).toEqual([]);
    expect(isAlive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
  });

  it('a reclaimed lease stops the orphans of a dead worker, on any host record', async () => {
    const { marker, grandchild } = await leftGrandchild();
    expect(isAlive(grandchild)).toBe(true);
    const [runId, stepId] = [marker[0]!.split('=')[1]!, 'tool'];
    expect(
      stopOrphanedAttempt({ runId, stepId, attempt: 1, owner: 'gone', pid: null, host: null }, 'here'),
    ).toBe(true);
    expect(await until(() => !isAlive(grandchild))).toBe(true);
  });

  it('a run of the same id in another store (another project) is not this one', async () => {
    const { env } = markerEnv();
    const pidFile = pidFileName();
    await runTree({ env: { ...env, BATON_STORE_ID: 'store-a' }, pidFile });
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    expect(findMarkedProcesses(attemptMarker(env.BATON_RUN_ID, 'tool', 1, 'store-b'))).toEqual([]);
    expect(findMarkedProcesses(attemptMarker(env.BATON_RUN_ID, 'tool', 1, 'store-a'))).toEqual([grandchild]);
    await stopMarkedProcesses(attemptMarker(env.BATON_RUN_ID, 'tool', 1, 'store-a'), 200);
  });

  it('a member of the agent’s group that cleared its environment is still stopped', async () => {
    const { env, marker } = markerEnv();
    const pidFile = pidFileName();
    const controller = new AbortController();
    // env -i: no marker; same process group; ignores SIGTERM.
    const code = `process.on('SIGTERM', () => {}); require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1 << 30);`;
    const script = `
      require('child_process').spawn('/usr/bin/env', ['-i', process.execPath, '-e', ${JSON.stringify(code)}], { stdio: 'ignore' });
      setInterval(() => {}, 1 << 30);
    `;
    const running = runScript(script, { env, marker, signal: controller.signal });
    expect(await until(() => pidWritten(pidFile))).toBe(true);
    const unmarked = Number(readFileSync(pidFile, 'utf8'));
    expect(findMarkedProcesses(marker)).not.toContain(unmarked);
    controller.abort();
    await running;
    expect(isAlive(unmarked)).toBe(false);
  });

  it('reports only once a stopped descendant is gone, though it reads as unmarked while it exits', async () => {
    // A grandchild holding 512 MB takes a while to exit after SIGKILL: its memory, environment
    // included, goes first, so for that while it carries no marker yet is still there.
    const { env, marker } = markerEnv();
    const pidFile = pidFileName();
    const grandchild = `const b = Buffer.alloc(512 << 20, 1); process.on('SIGTERM', () => {}); require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => b, 1 << 30);`;
    const script = `
      require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(grandchild)}], { detached: true, stdio: 'ignore' }).unref();
      const fs = require('fs');
      const wait = () => fs.existsSync(${JSON.stringify(pidFile)}) && fs.readFileSync(${JSON.stringify(pidFile)}, 'utf8') !== '' ? process.exit(0) : setTimeout(wait, 10);
      wait();
    `;
    const result = await runScript(script, { env, marker, killGraceMs: 100 });
    expect(result.exitCode).toBe(0);
    expect(isAlive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
  });

  it('leaves the pids it is told carry another marker unread (`except`)', async () => {
    const { marker, grandchild } = await leftGrandchild();
    expect(findMarkedProcesses(marker, { except: new Set([grandchild]) })).toEqual([]);
    expect(findMarkedProcesses(marker, { except: new Set([grandchild + 1]) })).toEqual([grandchild]);
    expect(await stopMarkedProcesses(marker, 200)).toBe(1);
  });

  it('while other attempts run beside it, what an attempt left behind is stopped and theirs are not', async () => {
    // Three agents of other attempts, still running: children of this process, passed over when
    // the fourth attempt's end looks for what it left.
    const others = [1, 2, 3].map(() => {
      const other = markerEnv();
      const controller = new AbortController();
      const pidFile = pidFileName();
      const running = runTree({ ...other, pidFile, stay: true, signal: controller.signal });
      return { ...other, controller, pidFile, running };
    });
    try {
      expect(await until(() => others.every((o) => pidWritten(o.pidFile)))).toBe(true);
      const { env, marker } = markerEnv();
      const pidFile = pidFileName();
      const result = await runTree({ env, pidFile, marker });
      expect(result.exitCode).toBe(0);
      expect(isAlive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
      expect(findMarkedProcesses(marker)).toEqual([]);
      for (const other of others) {
        expect(findMarkedProcesses(other.marker)).toHaveLength(2); // its agent and its grandchild
        other.controller.abort();
        expect((await other.running).aborted).toBe(true);
        expect(findMarkedProcesses(other.marker)).toEqual([]);
      }
    } finally {
      // A failed assertion must not leave the other attempts' processes running for good.
      for (const other of others) {
        other.controller.abort();
        await other.running.catch(() => undefined);
        await stopMarkedProcesses(other.marker, 200);
      }
    }
  });

  it('a process with the same variables of another attempt is left alone', async () => {
    const { env, grandchild } = await leftGrandchild();
    const other = attemptMarker(env.BATON_RUN_ID, 'tool', 2);
    expect(findMarkedProcesses(other)).toEqual([]);
    expect(isAlive(grandchild)).toBe(true);
    await stopMarkedProcesses(attemptMarker(env.BATON_RUN_ID, 'tool', 1), 200);
  });
});
