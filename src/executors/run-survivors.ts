/**
 * What is left of one supervised run, and the signals that stop it: the child's process group and,
 * with a marker, every process carrying it wherever it moved (see attempt-processes.ts). The I/O
 * side of the looks and signals that supervision.ts asks for; it decides nothing.
 */
import {
  type AttemptMarker,
  findMarkedProcesses,
  groupHasLiveMembers,
  isLiveProcess,
  signalMarkedProcesses,
} from './attempt-processes.js';

interface RunSurvivors {
  /** The child's group (not with SIGTERM for a launcher's: see `launcher`) and every marked process. */
  signal(signal: 'SIGTERM' | 'SIGKILL'): void;
  /**
   * At the child's exit: whether marked processes (started after pid `bornAfter` and not in
   * `except`, when given) or live members of its group remain. Only with a marker; remembers what
   * it found so that later looks skip what cannot have come back.
   */
  leftAtExit(scope: { bornAfter?: number; except: ReadonlySet<number> }): boolean;
  /** Whether anything of the run is still alive. */
  anyLeft(): boolean;
}

/** Signals a group from a timer or event handler, where a throw would crash the process. */
export function signalGroupQuietly(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * The survivors of the run whose child is `pid` (undefined: never started). `launcher`: the child
 * is a sandbox launcher that ends everything inside it when it dies, so its group gets no SIGTERM
 * (the agent inside gets its grace) and only SIGKILL with the rest.
 */
export function survivorsOf(
  pid: number | undefined,
  marker: AttemptMarker | undefined,
  launcher: boolean,
): RunSurvivors {
  // Once the child has exited, only the descendants alive then can start others: when none
  // was, none is left, and the scan of /proc (about 1 ms per 100 processes) is not repeated.
  let noneMarkedAtExit = false;
  // Nor was any member of its group: nothing of the run is left, and nothing can come back.
  let nothingLeftAtExit = false;
  // The marked processes signalled so far: one that is exiting reads as unmarked before it is
  // gone (its memory, environment included, goes first), so these are waited for by pid. Only
  // waited for: a pid is never signalled again once its marker is not seen (it may be reused).
  const signalled = new Set<number>();
  const signalledAlive = () => {
    for (const signalledPid of signalled) {
      if (isLiveProcess(signalledPid)) return true;
      signalled.delete(signalledPid);
    }
    return false;
  };
  const markedAlive = () =>
    marker !== undefined && !noneMarkedAtExit && findMarkedProcesses(marker).length > 0;
  // A launcher's group is only ever SIGKILLed: its SIGTERM would kill the agent inside at once.
  const termGroup = !(launcher && marker !== undefined);
  return {
    signal(signal) {
      if (pid !== undefined && (signal === 'SIGKILL' || termGroup)) signalGroupQuietly(pid, signal);
      if (marker !== undefined)
        for (const reached of signalMarkedProcesses(marker, signal)) signalled.add(reached);
    },
    leftAtExit(scope) {
      if (marker === undefined) return false;
      if (findMarkedProcesses(marker, scope).length > 0) return true;
      noneMarkedAtExit = true;
      if (pid !== undefined && groupHasLiveMembers(pid)) return true;
      nothingLeftAtExit = true;
      return false;
    },
    // With a marker, what is left is what carries it, what was signalled for carrying it, and live
    // members of the child's group (a zombie does not count, which matters where pid 1 does not
    // reap). Without one, the group.
    anyLeft() {
      return marker !== undefined
        ? signalledAlive() ||
            (!nothingLeftAtExit && ((pid !== undefined && groupHasLiveMembers(pid)) || markedAlive()))
        : pid !== undefined && signalGroupQuietly(pid, 0);
    },
  };
}
