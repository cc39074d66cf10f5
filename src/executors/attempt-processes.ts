/**
 * Every process of one attempt, found by its marker: the `BATON_RUN_ID`, `BATON_STEP_ID` and
 * `BATON_ATTEMPT` variables Baton gives the agent, which every descendant inherits, whatever
 * process group or session it moved to (claude's Bash tool and gemini's shell tool start groups of
 * their own) and after its parent died (reparented to pid 1). Read from `/proc/<pid>/environ` on
 * Linux; elsewhere nothing is found and only the agent's process group is signalled. A process that
 * clears its environment (`env -i`) leaves the marker behind and is the one accepted escape.
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';

/** What identifies an attempt's processes: `NAME=value` entries that must all be in the environment. */
export type AttemptMarker = readonly string[];

/** The variables that make the marker, in the order Baton sets them. */
const MARKER_VARIABLES = ['BATON_RUN_ID', 'BATON_STEP_ID', 'BATON_ATTEMPT'] as const;

/** The marker of the attempt whose agent gets `env`; undefined when `env` does not carry one. */
export function attemptMarkerOf(
  env: Readonly<Record<string, string | undefined>>,
): AttemptMarker | undefined {
  const entries: string[] = [];
  for (const name of MARKER_VARIABLES) {
    const value = env[name];
    if (value === undefined || value === '') return undefined;
    entries.push(`${name}=${value}`);
  }
  // Which store the run is in, when set: two projects on one machine may both have a run "nightly".
  if (env.BATON_STORE_ID) entries.push(`BATON_STORE_ID=${env.BATON_STORE_ID}`);
  return entries;
}

export function attemptMarker(
  runId: string,
  stepId: string,
  attempt: number,
  storeId?: string,
): AttemptMarker {
  const entries = [`BATON_RUN_ID=${runId}`, `BATON_STEP_ID=${stepId}`, `BATON_ATTEMPT=${attempt}`];
  return storeId === undefined ? entries : [...entries, `BATON_STORE_ID=${storeId}`];
}

/**
 * Pids of the live processes whose environment carries every entry of `marker`; never this process.
 * /proc holds bytes: entries are compared in their UTF-8 form, one whole NUL-separated entry each.
 * About 10 µs per environment read (1 ms with 100 processes); `bornAfter` and `except` leave
 * processes unread: those started before pid `bornAfter` (see pidRange), and `except`, pids the
 * caller knows carry another marker (its own live children, started with another attempt's).
 */
export function findMarkedProcesses(
  marker: AttemptMarker,
  options: { bornAfter?: number; except?: ReadonlySet<number> } = {},
): number[] {
  const range = pidRange(options.bornAfter);
  const except = options.except;
  const wanted = marker.map((entry) => Buffer.from(entry, 'utf8'));
  return (processIds() ?? []).filter(
    (pid) =>
      pid !== process.pid &&
      (range === undefined || (pid > range.after && pid <= range.last)) &&
      !except?.has(pid) &&
      carries(pid, wanted),
  );
}

/** The pids /proc lists (pid 1 left out: never ours to stop); undefined where there is no /proc. */
function processIds(): number[] | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const pids: number[] = [];
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const pid = Number(name);
    if (pid > 1) pids.push(pid);
  }
  return pids;
}

/** Whether process `pid` carries every entry of `marker` in its environment (a pid may be reused). */
export function carriesMarker(pid: number, marker: AttemptMarker): boolean {
  return carries(
    pid,
    marker.map((entry) => Buffer.from(entry, 'utf8')),
  );
}

function carries(pid: number, entries: readonly Buffer[]): boolean {
  const environ = readEnviron(pid);
  return environ !== undefined && entries.every((entry) => hasEntry(environ, entry));
}

/**
 * The pids a process started after `bornAfter` can have, from the kernel's last allocated pid:
 * pids are handed out in increasing order until they wrap at pid_max. Undefined (look at every
 * process) when they may have wrapped since, or the kernel does not say. Callers pass `bornAfter`
 * only for a short-lived agent, which cannot have started pid_max processes meanwhile.
 */
function pidRange(bornAfter: number | undefined): { after: number; last: number } | undefined {
  if (bornAfter === undefined) return undefined;
  const last = lastPid();
  return last !== undefined && last >= bornAfter ? { after: bornAfter, last } : undefined;
}

const LAST_PID_BUFFER = Buffer.alloc(32);

/** The kernel's last allocated pid; one read into a small buffer (readFileSync costs 5x more here). */
function lastPid(): number | undefined {
  let fd: number | undefined;
  try {
    fd = openSync('/proc/sys/kernel/ns_last_pid', 'r');
    const length = readSync(fd, LAST_PID_BUFFER, 0, LAST_PID_BUFFER.length, 0);
    const last = Number(LAST_PID_BUFFER.toString('latin1', 0, length));
    return length > 0 && Number.isInteger(last) ? last : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Reused across reads: one scan reads every process's environment. */
const ENVIRON_BUFFER = Buffer.alloc(256 * 1024);

/** A process's environment (NUL-separated bytes), undefined when gone or another user's. */
function readEnviron(pid: number): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(`/proc/${pid}/environ`, 'r');
    const length = readSync(fd, ENVIRON_BUFFER, 0, ENVIRON_BUFFER.length, 0);
    // A larger environment is rare: read it whole.
    return length < ENVIRON_BUFFER.length
      ? ENVIRON_BUFFER.subarray(0, length)
      : readFileSync(`/proc/${pid}/environ`);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function hasEntry(environ: Buffer, entry: Buffer): boolean {
  let from = 0;
  for (;;) {
    const at = environ.indexOf(entry, from);
    if (at === -1) return false;
    const end = at + entry.length;
    if ((at === 0 || environ[at - 1] === 0) && (end === environ.length || environ[end] === 0)) return true;
    from = at + 1;
  }
}

/**
 * Whether the process group `pgid` has a member that is not a zombie: what is left of an agent's
 * own group, marked or not (a member that cleared its environment, or any member off Linux, where
 * /proc cannot tell a zombie). A group that is gone costs one kill(0).
 */
export function groupHasLiveMembers(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  const pids = processIds();
  if (pids === undefined) return true;
  return pids.some((pid) => {
    const stat = processStat(pid);
    return stat !== undefined && stat.pgrp === pgid && stat.live;
  });
}

/**
 * Whether process `pid` exists and is not a zombie (off Linux: whether it exists). A process that
 * is exiting has let go of its memory, and so of its environment, before it becomes a zombie: one
 * that was signalled is waited for by its pid, not by its marker.
 */
export function isLiveProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = processStat(pid);
  // Unreadable: gone since kill(0), or no /proc here (then existing is all that can be told).
  return stat === undefined ? !existsSync('/proc/self/stat') : stat.live;
}

/** From /proc/<pid>/stat: its process group, and whether it still runs (not a zombie). */
function processStat(pid: number): { pgrp: number; live: boolean } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses; it ends at the last ")".
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pgrp: Number(fields[2]), live: fields[0] !== 'Z' && fields[0] !== 'X' };
}

/** Sends `signal` to every marked process; returns the pids it reached. */
export function signalMarkedProcesses(marker: AttemptMarker, signal: NodeJS.Signals): number[] {
  const reached: number[] = [];
  for (const pid of findMarkedProcesses(marker)) {
    try {
      process.kill(pid, signal);
      reached.push(pid);
    } catch {
      // exited in between
    }
  }
  return reached;
}

/**
 * Stops every marked process: SIGTERM, then SIGKILL to those still there after `graceMs`. Resolves
 * once none is left (or, if the kernel is slow to reap, a little after the SIGKILL).
 */
export async function stopMarkedProcesses(marker: AttemptMarker, graceMs: number): Promise<number> {
  const first = signalMarkedProcesses(marker, 'SIGTERM');
  if (first.length === 0) return 0;
  if (!(await noneLeft(marker, graceMs))) {
    signalMarkedProcesses(marker, 'SIGKILL');
    await noneLeft(marker, 2000);
  }
  return first.length;
}

const POLL_MS = 25;

async function noneLeft(marker: AttemptMarker, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (findMarkedProcesses(marker).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
