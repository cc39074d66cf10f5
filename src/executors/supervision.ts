/**
 * The supervision of one attempt's process tree as a state machine: which signal the run gets,
 * which timer runs and when the result is reported, whatever the order in which the child's exit,
 * the close of its pipes, the deadline, an abort, a fault and the kill timers arrive. Pure: no
 * process, no clock, no timer; run-process.ts feeds it events and performs the actions it returns.
 *
 *   phase               event                  → phase                actions
 *   spawning            spawn-failed           → finished             finish (spawnError)
 *   running             stop¹                  → terminating          SIGTERM run, kill timer
 *   running             exited                 → exited               close timer (stop¹ too if left behind²)
 *   terminating         kill timer             → killing              SIGKILL run
 *   terminating         exited                 → exited-terminating   close timer
 *   killing             exited                 → exited-killing       close timer
 *   exited              stop¹                  → exited-terminating   SIGTERM run, kill timer
 *   exited              closed                 → looking-after-close  look       (unmarked: finished)
 *   exited-terminating  kill timer             → exited-killing       SIGKILL run
 *   exited-terminating  closed                 → awaiting-survivors   look
 *   exited-killing      closed                 → looking-after-kill   look
 *   exited*             close timer            → looking-after-kill   SIGKILL group, close pipes, look
 *                                                                     (unmarked: finished)
 *   looking-after-close looked: some           → awaiting-survivors   SIGTERM run, kill timer, look in 25 ms²
 *   awaiting-survivors  look timer             → (same)               look
 *   awaiting-survivors  looked: some           → (same)               look in 25, 50, 100, 200, 400, 400… ms
 *   awaiting-survivors  kill timer             → reaping              SIGKILL run, cancel look, reap timer, look
 *                                                                     (unmarked: finished)
 *   looking-after-kill  looked: some           → reaping              SIGKILL run, reap timer, look
 *                                                                     (unmarked: finished)
 *   reaping             look timer             → (same)               look
 *   reaping             looked: some           → (same)               look in 25 ms
 *   reaping             reap timer             → finished             finish
 *   reaping             stop¹                  → (same)               SIGTERM run, kill timer
 *   reaping             kill timer             → (same)               SIGKILL run, look
 *   looking-*, awaiting-survivors, reaping: looked: none → finished (finish)
 *
 * ¹ stop: the deadline timer, an abort, a fault or a stall, only while nothing asked the run to
 *   stop (`stoppedBy` keeps the first reason: timedOut, aborted and stalled in the outcome).
 * ² left behind: processes of the run outlive the child (exit) or its pipes (close): `leftovers`.
 * Every other event is ignored: timers nobody waits for, a late close, and all once finished.
 * A look is always a step's last action and is answered at once with a `looked` event: a
 * looking-* phase never outlives the event that entered it.
 */

/**
 * How far the child got (spawning: no pid yet, its error is on the way; running; exited with its
 * pipes open; pipes closed) and what the run was sent (nothing, SIGTERM, SIGKILL). looking-* wait
 * for the answer to a look, awaiting-survivors for SIGTERMed ones to go, reaping for SIGKILLed ones.
 */
type SupervisionPhase =
  | 'spawning'
  | 'running'
  | 'terminating'
  | 'killing'
  | 'exited'
  | 'exited-terminating'
  | 'exited-killing'
  | 'looking-after-close'
  | 'awaiting-survivors'
  | 'looking-after-kill'
  | 'reaping'
  | 'finished';

/**
 * Why the run was first sent SIGTERM: its deadline (timedOut), its AbortSignal (aborted: cancel,
 * lost lease, shutdown), a fault (a log write failed or onSpawn threw: runProcess then rejects),
 * processes of the run outliving the child or its pipes (leftovers), or its silence (stall: no
 * output for `stallTimeoutMs`, watched by run-process.ts).
 */
type StopReason = 'deadline' | 'abort' | 'fault' | 'leftovers' | 'stall';

/** deadline: timeoutMs; kill: killGraceMs after SIGTERM; close: CLOSE_AFTER_EXIT_MS; reap: REAP_AFTER_KILL_MS. */
export type SupervisionTimer = 'deadline' | 'kill' | 'close' | 'look' | 'reap';

interface SpawnFailure {
  code: string;
  message: string;
}

export type SupervisionEvent =
  /** The child's 'error' event; a start failure only while spawning (later: a failed kill, ignored). */
  | { type: 'spawn-failed'; spawnError: SpawnFailure }
  /** The child's 'exit'. `leftBehind`: marked processes or live members of its group remain (marked runs only). */
  | { type: 'exited'; exitCode: number | null; signal: NodeJS.Signals | null; leftBehind: boolean }
  /** The child's 'close': it exited and every pipe of it is closed. */
  | { type: 'closed' }
  | { type: 'aborted' }
  | { type: 'faulted' }
  /** The child printed nothing for its stall timeout (run-process.ts watches its output). */
  | { type: 'stalled' }
  | { type: 'timer-fired'; timer: SupervisionTimer }
  /** The answer to look-for-survivors. */
  | { type: 'looked'; survivors: boolean };

/** What the supervision reports: the rest of the result comes from the streams. */
export interface SupervisionOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Stopped because it printed nothing for its stall timeout. */
  stalled: boolean;
  spawnError?: SpawnFailure;
}

export type SupervisionAction =
  /** The child's group (not with SIGTERM when it is a launcher's) and every marked process. */
  | { kind: 'signal-run'; signal: 'SIGTERM' | 'SIGKILL' }
  /** Only the child's group. */
  | { kind: 'signal-group'; signal: 'SIGKILL' }
  /** Destroy stdout, stderr and the status pipe: what arrives later is not read. */
  | { kind: 'close-pipes' }
  /** Replaces a pending timer of that name. */
  | { kind: 'start-timer'; timer: SupervisionTimer; ms: number }
  | { kind: 'cancel-timer'; timer: SupervisionTimer }
  /** Answer at once with a `looked` event: is a marked process, a signalled one or the group alive? */
  | { kind: 'look-for-survivors' }
  /** Report the outcome; every timer is cleared and no event is listened to any more. */
  | { kind: 'finish'; outcome: SupervisionOutcome };

export interface SupervisionSettings {
  /** The run has a marker: its processes are found wherever they are (see attempt-processes.ts). */
  marked: boolean;
  timeoutMs: number;
  killGraceMs: number;
}

export interface SupervisionState {
  readonly phase: SupervisionPhase;
  /** Why SIGTERM was first sent; null while nothing asked the run to stop. */
  readonly stoppedBy: StopReason | null;
  readonly exit: { exitCode: number | null; signal: NodeJS.Signals | null } | null;
  /** In awaiting-survivors: the wait before the look after the next one that finds survivors. */
  readonly nextLookMs: number;
  readonly settings: SupervisionSettings;
}

interface SupervisionStep {
  state: SupervisionState;
  actions: SupervisionAction[];
}

/** After the child exits, how long a grandchild may keep its stdout/stderr open before the group is killed. */
export const CLOSE_AFTER_EXIT_MS = 2000;
/** The first wait between looks for survivors; awaiting-survivors doubles it up to LOOK_MAX_MS. */
export const LOOK_EVERY_MS = 25;
/** Each look scans /proc (about 1 ms per 100 processes): the longer the wait, the rarer. */
export const LOOK_MAX_MS = 400;
/** After SIGKILL, how long to wait for the kernel to take the processes away before reporting. */
export const REAP_AFTER_KILL_MS = 2000;

/** The first step: a child with a pid runs against its deadline; without one, its error is awaited. */
export function startSupervision(settings: SupervisionSettings, spawned: boolean): SupervisionStep {
  const state: SupervisionState = {
    phase: spawned ? 'running' : 'spawning',
    stoppedBy: null,
    exit: null,
    nextLookMs: LOOK_EVERY_MS,
    settings,
  };
  return { state, actions: spawned ? [startTimer('deadline', settings.timeoutMs)] : [] };
}

export function transition(state: SupervisionState, event: SupervisionEvent): SupervisionStep {
  switch (event.type) {
    case 'spawn-failed':
      return state.phase === 'spawning' ? finish(state, [], event.spawnError) : ignore(state);
    case 'exited':
      return onExit(state, event);
    case 'closed':
      return onClose(state);
    case 'aborted':
      return stop(state, 'abort');
    case 'faulted':
      return stop(state, 'fault');
    case 'stalled':
      return stop(state, 'stall');
    case 'timer-fired':
      return onTimer(state, event.timer);
    case 'looked':
      return onLooked(state, event.survivors);
  }
}

/** The phase a stop request leads to from each phase that has not been asked to stop yet. */
const STOPPED_PHASE: Partial<Record<SupervisionPhase, SupervisionPhase>> = {
  running: 'terminating',
  exited: 'exited-terminating',
  // After a forced close: the SIGKILL went to the group only; the reason still counts.
  reaping: 'reaping',
};

/** SIGTERM to the run and the kill timer, the first time anything asks; later asks change nothing. */
function stop(state: SupervisionState, reason: StopReason, then: SupervisionAction[] = []): SupervisionStep {
  const phase = STOPPED_PHASE[state.phase];
  if (state.stoppedBy !== null || phase === undefined) return ignore(state);
  return {
    state: { ...state, phase, stoppedBy: reason },
    actions: [signalRun('SIGTERM'), startTimer('kill', state.settings.killGraceMs), ...then],
  };
}

/** The phase each phase before the exit moves to when the child exits. */
const EXITED_PHASE: Partial<Record<SupervisionPhase, SupervisionPhase>> = {
  running: 'exited',
  terminating: 'exited-terminating',
  killing: 'exited-killing',
};

function onExit(state: SupervisionState, event: SupervisionEvent & { type: 'exited' }): SupervisionStep {
  const phase = EXITED_PHASE[state.phase];
  if (phase === undefined) return ignore(state);
  const exited = { ...state, phase, exit: { exitCode: event.exitCode, signal: event.signal } };
  const closeTimer = startTimer('close', CLOSE_AFTER_EXIT_MS);
  // The run ends with its child: what it left behind is stopped now.
  if (event.leftBehind && exited.stoppedBy === null) return stop(exited, 'leftovers', [closeTimer]);
  return { state: exited, actions: [closeTimer] };
}

function onClose(state: SupervisionState): SupervisionStep {
  // Node emits 'close' only after 'exit'; were it ever first, the run still ends (exit unknown).
  const phase = EXITED_PHASE[state.phase] ?? state.phase;
  switch (phase) {
    case 'exited':
      // Without a marker nothing was left to find at the exit: the run is over with its pipes.
      return state.settings.marked ? look(state, 'looking-after-close', []) : finish(state, []);
    case 'exited-terminating':
      return look({ ...state, nextLookMs: LOOK_EVERY_MS }, 'awaiting-survivors', []);
    case 'exited-killing':
      return look(state, 'looking-after-kill', []);
    default:
      return ignore(state); // closed already (forcibly, by the close timer)
  }
}

function onTimer(state: SupervisionState, timer: SupervisionTimer): SupervisionStep {
  const { phase, settings } = state;
  switch (timer) {
    case 'deadline':
      return stop(state, 'deadline');
    case 'kill':
      if (phase === 'terminating') return move(state, 'killing', [signalRun('SIGKILL')]);
      if (phase === 'exited-terminating') return move(state, 'exited-killing', [signalRun('SIGKILL')]);
      if (phase === 'awaiting-survivors') {
        const killed = [signalRun('SIGKILL'), cancelTimer('look')];
        return settings.marked ? reap(state, killed) : finish(state, killed);
      }
      // A stop asked after a forced close: SIGKILL again, and look at once.
      if (phase === 'reaping') return look(state, 'reaping', [signalRun('SIGKILL')]);
      return ignore(state);
    case 'close': {
      if (phase !== 'exited' && phase !== 'exited-terminating' && phase !== 'exited-killing') {
        return ignore(state);
      }
      // A descendant holds the pipes open: the child's group is killed and the pipes let go.
      const forced: SupervisionAction[] = [
        { kind: 'signal-group', signal: 'SIGKILL' },
        { kind: 'close-pipes' },
      ];
      return settings.marked ? look(state, 'looking-after-kill', forced) : finish(state, forced);
    }
    case 'look':
      return phase === 'awaiting-survivors' || phase === 'reaping' ? look(state, phase, []) : ignore(state);
    case 'reap':
      return phase === 'reaping' ? finish(state, []) : ignore(state);
  }
}

function onLooked(state: SupervisionState, survivors: boolean): SupervisionStep {
  switch (state.phase) {
    case 'looking-after-close': {
      if (!survivors) return finish(state, []);
      // Processes of the run outlived its pipes: they get SIGTERM and their grace, as at a stop.
      const stopped = stop({ ...state, phase: 'exited' }, 'leftovers');
      const awaiting = { ...stopped.state, phase: 'awaiting-survivors' as const, nextLookMs: LOOK_EVERY_MS };
      return lookLater(awaiting, stopped.actions);
    }
    case 'awaiting-survivors':
      return survivors ? lookLater(state, []) : finish(state, []);
    case 'looking-after-kill': {
      if (!survivors) return finish(state, []);
      const killed = [signalRun('SIGKILL')];
      // Without a marker the group is all there is to wait for, and SIGKILL cannot be ignored.
      return state.settings.marked ? reap(state, killed) : finish(state, killed);
    }
    case 'reaping':
      return survivors ? move(state, 'reaping', [startTimer('look', LOOK_EVERY_MS)]) : finish(state, []);
    default:
      return ignore(state);
  }
}

/** Awaiting survivors: the next look after a wait that doubles each time, up to LOOK_MAX_MS. */
function lookLater(state: SupervisionState, before: SupervisionAction[]): SupervisionStep {
  return {
    state: { ...state, nextLookMs: Math.min(state.nextLookMs * 2, LOOK_MAX_MS) },
    actions: [...before, startTimer('look', state.nextLookMs)],
  };
}

/** SIGKILLed processes take a moment to go: report once they have, so none is seen after. */
function reap(state: SupervisionState, killed: SupervisionAction[]): SupervisionStep {
  return look(state, 'reaping', [...killed, startTimer('reap', REAP_AFTER_KILL_MS)]);
}

function look(
  state: SupervisionState,
  phase: SupervisionPhase,
  before: SupervisionAction[],
): SupervisionStep {
  return move(state, phase, [...before, { kind: 'look-for-survivors' }]);
}

function finish(
  state: SupervisionState,
  before: SupervisionAction[],
  spawnError?: SpawnFailure,
): SupervisionStep {
  const outcome: SupervisionOutcome = {
    exitCode: state.exit?.exitCode ?? null,
    signal: state.exit?.signal ?? null,
    timedOut: state.stoppedBy === 'deadline',
    aborted: state.stoppedBy === 'abort',
    stalled: state.stoppedBy === 'stall',
    ...(spawnError ? { spawnError } : {}),
  };
  return move(state, 'finished', [...before, { kind: 'finish', outcome }]);
}

function move(
  state: SupervisionState,
  phase: SupervisionPhase,
  actions: SupervisionAction[],
): SupervisionStep {
  return { state: { ...state, phase }, actions };
}

function ignore(state: SupervisionState): SupervisionStep {
  return { state, actions: [] };
}

function signalRun(signal: 'SIGTERM' | 'SIGKILL'): SupervisionAction {
  return { kind: 'signal-run', signal };
}

function startTimer(timer: SupervisionTimer, ms: number): SupervisionAction {
  return { kind: 'start-timer', timer, ms };
}

function cancelTimer(timer: SupervisionTimer): SupervisionAction {
  return { kind: 'cancel-timer', timer };
}
