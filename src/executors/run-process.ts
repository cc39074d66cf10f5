/**
 * Runs one agent CLI process under supervision: never through a shell, in its own process group,
 * with a wall-clock timeout, abort support, output streamed to a log file and only the tails of
 * stdout and stderr kept in memory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  closeSync,
  createWriteStream,
  fchmodSync,
  mkdirSync,
  openSync,
  statSync,
  type WriteStream,
} from 'node:fs';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { BatonError } from '../core/errors.js';
import type { AttemptMarker } from './attempt-processes.js';
import { ByteTail } from './byte-tail.js';
import { signalGroupQuietly, survivorsOf } from './run-survivors.js';
import { StallWatch } from './stall-watch.js';
import {
  type SupervisionAction,
  type SupervisionEvent,
  type SupervisionOutcome,
  type SupervisionTimer,
  startSupervision,
  transition,
} from './supervision.js';

export interface RunProcessOptions {
  /** argv[0] is the executable (looked up on PATH by spawn); the rest are literal arguments. */
  argv: readonly string[];
  /**
   * The file to execute for argv[0] when already located (see checkAgentCommand); argv[0] stays as
   * given. `null`: the lookup found no such program, so nothing is started (spawnError ENOENT):
   * a second search by spawn could only find a file nobody checked. Undefined: spawn searches PATH.
   */
  executable?: string | null;
  cwd: string;
  /** The full environment given to the child. */
  env: NodeJS.ProcessEnv;
  /** Sent on stdin, which is then closed. When undefined stdin is not a pipe at all ('ignore'). */
  stdinText?: string;
  /** Wall clock, ms. Then the whole process group gets SIGTERM, and SIGKILL after killGraceMs. */
  timeoutMs: number;
  /** Ms between SIGTERM and SIGKILL. Default 5000. */
  killGraceMs?: number;
  /** stdout and stderr, in arrival order, streamed here (parent dirs created, mode 0o600). */
  logPath: string;
  /** Abort: the same SIGTERM-then-SIGKILL sequence on the group; result.aborted = true. */
  signal?: AbortSignal;
  /** Bytes of stdout and of stderr kept in memory. Default 65536. */
  tailBytes?: number;
  /** Called once the child has a pid. */
  onSpawn?: (pid: number) => void;
  /**
   * The environment entries every process of this run inherits (see attempt-processes.ts). With it,
   * no descendant outlives the run: when the child ends, times out or is aborted, every process
   * carrying the marker gets SIGTERM, then SIGKILL after killGraceMs, whatever group it is in.
   * Without it only the child's process group is signalled.
   */
  marker?: AttemptMarker;
  /**
   * argv[0] is a sandbox launcher (bwrap) that ends everything inside it when it dies: SIGTERM then
   * goes only to the marked processes (the launcher does not carry the marker), so the agent gets
   * its grace; the launcher's group gets SIGKILL with the rest once the grace is over. Needs `marker`.
   */
  launcher?: boolean;
  /** fd 3 of the child is a pipe whose text is returned as `statusText` (bwrap's --json-status-fd 3). */
  statusFd?: boolean;
  /**
   * Ms the child may print nothing before it is stopped as stalled (result.stalled); 0 or undefined:
   * never. Output is any byte on stdout or stderr, except a chunk repeating the one before it (a
   * CLI's own retry notice printed over and over), or a file changed under `watchFolder`. Looked at
   * every second at most.
   */
  stallTimeoutMs?: number;
  /** Called once the child has printed nothing for half its stall timeout (again after new output). */
  onStalling?: (silentMs: number) => void;
  /** With stallTimeoutMs: a change of a file under this folder (the workspace) counts as output. */
  watchFolder?: string;
  /** Absolute paths under watchFolder whose changes do not count (the Baton home). */
  watchIgnore?: readonly string[];
  /** With stallTimeoutMs: while true (a tool approval waits for a person), silence is no stall. */
  stallPaused?: () => boolean;
}

export interface ProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Stopped because it printed nothing for `stallTimeoutMs`. */
  stalled: boolean;
  durationMs: number;
  /** The child could not be started (ENOENT: not found, EACCES: not executable); exitCode is null. */
  spawnError?: { code: string; message: string };
  /** utf8 of the last tailBytes of stdout, starting at a character boundary. */
  stdoutTail: string;
  stderrTail: string;
  stdoutBytes: number;
  stderrBytes: number;
  logPath: string;
  /** What the child wrote to fd 3, with `statusFd` (at most 64 KiB). */
  statusText?: string;
}

const DEFAULT_KILL_GRACE_MS = 5000;
const DEFAULT_TAIL_BYTES = 65536;
/** Runs shorter than this look for descendants only among pids handed out after their own. */
const SHORT_RUN_MS = 10_000;

/**
 * The children runProcess started that are not reaped yet, with the marker each was given (its
 * entries joined; '' for none). They are never another attempt's descendants (a descendant whose
 * parent dies goes to pid 1 or a subreaper, never to this process), so the look for what an attempt
 * left behind does not read their environments: with many attempts at once, most of the processes
 * started after an agent are the other agents.
 */
const liveChildren = new Map<number, string>();

/** The live children that were given another marker than `marker`. */
function childrenMarkedOtherwise(marker: AttemptMarker): Set<number> {
  const own = marker.join('\0');
  const others = new Set<number>();
  for (const [pid, given] of liveChildren) if (given !== own) others.add(pid);
  return others;
}

/**
 * Sends `signal` to the process group led by `pid`. Returns false when no such group exists (ESRCH).
 */
export function killProcessGroup(pid: number, signal: NodeJS.Signals): boolean {
  // -0 is our own group and -1 is every process we may signal: never.
  if (!Number.isInteger(pid) || pid <= 1) {
    throw new BatonError('INVALID_ARGUMENT', `killProcessGroup: pid must be an integer > 1, got ${pid}`);
  }
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

function validate(options: RunProcessOptions): void {
  const fail = (message: string) => new BatonError('INVALID_ARGUMENT', `runProcess: ${message}`);
  if (options.argv.length === 0 || options.argv[0] === '') throw fail('argv must name an executable');
  if (!(options.timeoutMs > 0)) throw fail(`timeoutMs must be a positive number, got ${options.timeoutMs}`);
  const grace = options.killGraceMs;
  if (grace !== undefined && !(grace >= 0)) throw fail(`killGraceMs must be >= 0, got ${grace}`);
  const tail = options.tailBytes;
  if (tail !== undefined && !(Number.isInteger(tail) && tail >= 0)) {
    throw fail(`tailBytes must be a non-negative integer, got ${tail}`);
  }
}

function describeSpawnError(error: NodeJS.ErrnoException, options: RunProcessOptions) {
  const code = error.code ?? 'UNKNOWN';
  let message = error.message;
  if (code === 'ENOENT') {
    let cwdIsDir = false;
    try {
      cwdIsDir = statSync(options.cwd).isDirectory();
    } catch {}
    message = cwdIsDir
      ? `executable "${options.argv[0]}" not found (looked up on PATH): ${error.message}`
      : `working directory "${options.cwd}" does not exist: ${error.message}`;
  } else if (code === 'EACCES') {
    message = `executable "${options.argv[0]}" is not executable (check its mode): ${error.message}`;
  }
  return { code, message };
}

/** Runs one process to completion. Never rejects for a child failure; rejects for bad input or log I/O errors. */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  validate(options);
  // Synchronous: a few microseconds each, where the thread pool would cost a round trip apiece.
  mkdirSync(dirname(options.logPath), { recursive: true, mode: 0o700 });
  const fd = openSync(options.logPath, 'w', 0o600);
  try {
    fchmodSync(fd, 0o600); // an existing file keeps its old mode on open
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  // The stream writes; once it has finished, the descriptor is closed here, synchronously (closing
  // through the stream costs a thread-pool round trip per attempt). destroy() still closes it,
  // after any write in flight.
  const log = createWriteStream('', { fd, autoClose: false });

  if (options.executable === null) {
    await closeLog(log, fd);
    const empty = new ByteTail(0);
    const notFound = Object.assign(new Error(`spawn ${options.argv[0]} ENOENT`), { code: 'ENOENT' });
    return { ...resultOf(empty, empty, options.logPath), spawnError: describeSpawnError(notFound, options) };
  }
  let child: ChildProcess | undefined;
  try {
    if (!options.signal?.aborted) {
      child = spawn(options.executable ?? options.argv[0]!, options.argv.slice(1), {
        argv0: options.argv[0]!,
        cwd: options.cwd,
        env: options.env,
        shell: false,
        detached: true,
        windowsHide: true,
        stdio: [
          options.stdinText === undefined ? 'ignore' : 'pipe',
          'pipe',
          'pipe',
          ...(options.statusFd ? (['pipe'] as const) : []),
        ],
      });
    }
  } catch (error) {
    log.destroy(); // spawn throws synchronously only for bad arguments (e.g. a NUL byte)
    throw error;
  }
  if (child === undefined) {
    await closeLog(log, fd);
    const empty = new ByteTail(0);
    return { ...resultOf(empty, empty, options.logPath), aborted: true };
  }
  return supervise(child, options, log, fd);
}

/** Ends the stream (every write done), then closes the descriptor; a failed write destroys both. */
function closeLog(log: WriteStream, fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    log.once('error', reject);
    log.end((error?: Error | null) => {
      log.off('error', reject);
      // A failed stream destroys itself, closing the descriptor: never close it twice.
      if (error) {
        reject(error);
        return;
      }
      try {
        closeSync(fd);
      } catch (error) {
        reject(error);
        return;
      }
      resolve();
    });
  });
}

function resultOf(stdout: ByteTail, stderr: ByteTail, logPath: string): ProcessResult {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted: false,
    stalled: false,
    durationMs: 0,
    stdoutTail: stdout.text(),
    stderrTail: stderr.text(),
    stdoutBytes: stdout.total,
    stderrBytes: stderr.total,
    logPath,
  };
}

function supervise(
  child: ChildProcess,
  options: RunProcessOptions,
  log: WriteStream,
  fd: number,
): Promise<ProcessResult> {
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const tailBytes = options.tailBytes ?? DEFAULT_TAIL_BYTES;
  return new Promise<ProcessResult>((resolve, reject) => {
    const started = performance.now();
    const pid = child.pid;
    const stdout = new ByteTail(tailBytes);
    const stderr = new ByteTail(tailBytes);
    const status = options.statusFd ? new ByteTail(65536) : undefined;
    const statusStream = options.statusFd ? (child.stdio[3] as Readable | null) : null;
    const streams = [child.stdout!, child.stderr!];
    let failure: unknown; // a bug or a log I/O error: reject once the child is gone
    const timers = new Map<SupervisionTimer, NodeJS.Timeout>();

    const marker = options.marker;
    if (pid !== undefined) liveChildren.set(pid, marker?.join('\0') ?? '');
    // What of the run is still alive, and the signals that stop it (the child's group, marked processes).
    const survivors = survivorsOf(pid, marker, options.launcher ?? false);

    // When to signal, wait and report is decided by the state machine (supervision.ts); this
    // function only listens to the child, the log, the signal and the timers, and acts.
    const first = startSupervision(
      { marked: marker !== undefined, timeoutMs: options.timeoutMs, killGraceMs },
      pid !== undefined,
    );
    let state = first.state;
    const dispatch = (event: SupervisionEvent) => {
      const step = transition(state, event);
      state = step.state;
      for (const action of step.actions) perform(action);
    };
    const perform = (action: SupervisionAction) => {
      switch (action.kind) {
        case 'signal-run':
          survivors.signal(action.signal);
          return;
        case 'signal-group':
          if (pid !== undefined) signalGroupQuietly(pid, action.signal);
          return;
        case 'close-pipes':
          for (const s of streams) s.destroy();
          statusStream?.destroy();
          return;
        case 'start-timer': {
          clearTimeout(timers.get(action.timer));
          const fire = () => {
            timers.delete(action.timer);
            dispatch({ type: 'timer-fired', timer: action.timer });
          };
          timers.set(action.timer, setTimeout(fire, action.ms));
          return;
        }
        case 'cancel-timer':
          clearTimeout(timers.get(action.timer));
          timers.delete(action.timer);
          return;
        case 'look-for-survivors':
          dispatch({ type: 'looked', survivors: survivors.anyLeft() });
          return;
        case 'finish':
          finish(action.outcome);
          return;
      }
    };
    const onAbort = () => dispatch({ type: 'aborted' });

    const finish = (outcome: SupervisionOutcome) => {
      stallWatch?.stop();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      options.signal?.removeEventListener('abort', onAbort);
      const result: ProcessResult = {
        ...resultOf(stdout, stderr, options.logPath),
        exitCode: outcome.exitCode,
        signal: outcome.signal,
        timedOut: outcome.timedOut,
        aborted: outcome.aborted,
        stalled: outcome.stalled,
        durationMs: Math.round(performance.now() - started),
        ...(outcome.spawnError ? { spawnError: outcome.spawnError } : {}),
        ...(status === undefined ? {} : { statusText: status.text() }),
      };
      if (failure !== undefined) {
        log.destroy();
        reject(failure);
        return;
      }
      closeLog(log, fd).then(() => resolve(result), reject);
    };

    log.on('error', (error) => {
      failure ??= error;
      dispatch({ type: 'faulted' });
    });
    statusStream?.on('data', (chunk: Buffer) => status?.push(chunk));
    const stallWatch =
      (options.stallTimeoutMs ?? 0) > 0 && pid !== undefined
        ? new StallWatch({
            stallTimeoutMs: options.stallTimeoutMs!,
            ...(options.onStalling ? { onStalling: options.onStalling } : {}),
            ...(options.watchFolder === undefined ? {} : { watchFolder: options.watchFolder }),
            ...(options.watchIgnore ? { watchIgnore: options.watchIgnore } : {}),
            ...(options.stallPaused ? { paused: options.stallPaused } : {}),
            running: () => state.phase === 'running',
            onStalled: () => dispatch({ type: 'stalled' }),
          })
        : undefined;
    let paused = false;
    const forward = (stream: Readable, tail: ByteTail) => {
      stream.on('data', (chunk: Buffer) => {
        tail.push(chunk);
        stallWatch?.heard(chunk);
        if (failure !== undefined || log.write(chunk) || paused) return;
        paused = true; // the log is slower than the child: hold the child back instead of buffering
        for (const s of streams) s.pause();
        log.once('drain', () => {
          paused = false;
          for (const s of streams) s.resume();
        });
      });
    };
    forward(child.stdout!, stdout);
    forward(child.stderr!, stderr);

    // The run ends with its child: whatever it left behind (a grandchild holding stdout open, a
    // tool's process in a group of its own) is what the exit's look finds, and is stopped now.
    const lookAtExit = (): boolean => {
      if (marker === undefined || state.phase === 'finished') return false;
      // A short run's descendants all have pids above its own (see findMarkedProcesses).
      const short = performance.now() - started < SHORT_RUN_MS && pid !== undefined;
      const except = childrenMarkedOtherwise(marker);
      return survivors.leftAtExit(short ? { bornAfter: pid, except } : { except });
    };
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (pid !== undefined) return; // e.g. a failed kill(): the supervision above covers it
      dispatch({ type: 'spawn-failed', spawnError: describeSpawnError(error, options) });
    });
    child.on('exit', (code, signal) => {
      if (pid !== undefined) liveChildren.delete(pid);
      dispatch({ type: 'exited', exitCode: code, signal, leftBehind: lookAtExit() });
    });
    child.on('close', () => dispatch({ type: 'closed' }));

    if (pid === undefined) return; // spawn failed: 'error' follows
    if (options.stdinText !== undefined && child.stdin) {
      child.stdin.on('error', () => {}); // EPIPE when the child exits without reading
      child.stdin.end(options.stdinText);
    }
    for (const action of first.actions) perform(action); // the deadline
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      options.onSpawn?.(pid);
    } catch (error) {
      failure ??= error;
      dispatch({ type: 'faulted' });
    }
  });
}
