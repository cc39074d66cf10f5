import { describe, expect, it } from 'vitest';
import {
  CLOSE_AFTER_EXIT_MS,
  LOOK_EVERY_MS,
  LOOK_MAX_MS,
  REAP_AFTER_KILL_MS,
  type SupervisionAction,
  type SupervisionEvent,
  type SupervisionSettings,
  type SupervisionState,
  type SupervisionTimer,
  startSupervision,
  transition,
} from '../src/executors/supervision.js';

const SETTINGS: SupervisionSettings = { marked: true, timeoutMs: 10_000, killGraceMs: 5000 };

/** One attempt's supervision, fed one event at a time; `send` returns that event's actions. */
function machine(overrides: Partial<SupervisionSettings> = {}, spawned = true) {
  let step = startSupervision({ ...SETTINGS, ...overrides }, spawned);
  return {
    started: step.actions,
    get state(): SupervisionState {
      return step.state;
    },
    get phase() {
      return step.state.phase;
    },
    send(event: SupervisionEvent): SupervisionAction[] {
      step = transition(step.state, event);
      return step.actions;
    },
  };
}

const fire = (timer: SupervisionTimer): SupervisionEvent => ({ type: 'timer-fired', timer });
const exited = (
  exitCode: number | null,
  signal: NodeJS.Signals | null = null,
  leftBehind = false,
): SupervisionEvent => ({ type: 'exited', exitCode, signal, leftBehind });
const closed: SupervisionEvent = { type: 'closed' };
const aborted: SupervisionEvent = { type: 'aborted' };
const faulted: SupervisionEvent = { type: 'faulted' };
const looked = (survivors: boolean): SupervisionEvent => ({ type: 'looked', survivors });
const spawnFailed: SupervisionEvent = {
  type: 'spawn-failed',
  spawnError: { code: 'ENOENT', message: 'executable "x" not found' },
};
const ALL_EVENTS: SupervisionEvent[] = [
  spawnFailed,
  exited(0),
  exited(null, 'SIGKILL', true),
  closed,
  aborted,
  faulted,
  looked(true),
  looked(false),
  ...(['deadline', 'kill', 'close', 'look', 'reap'] as const).map(fire),
];

const term = { kind: 'signal-run', signal: 'SIGTERM' } as const;
const kill = { kind: 'signal-run', signal: 'SIGKILL' } as const;
const look = { kind: 'look-for-survivors' } as const;
const start = (timer: SupervisionTimer, ms: number) => ({ kind: 'start-timer', timer, ms }) as const;
const finish = (outcome: Partial<Extract<SupervisionAction, { kind: 'finish' }>['outcome']>) => ({
  kind: 'finish',
  outcome: { exitCode: null, signal: null, timedOut: false, aborted: false, stalled: false, ...outcome },
});

describe('supervision, event by event', () => {
  it('arms the deadline when the child has a pid; without one waits for its error, which is reported', () => {
    const run = machine();
    expect(run.phase).toBe('running');
    expect(run.started).toEqual([start('deadline', 10_000)]);

    const failed = machine({}, false);
    expect(failed.phase).toBe('spawning');
    expect(failed.started).toEqual([]);
    // Nothing runs: no stop can signal anything.
    for (const event of [aborted, faulted, fire('deadline')]) expect(failed.send(event)).toEqual([]);
    expect(failed.send(spawnFailed)).toEqual([
      finish({ spawnError: { code: 'ENOENT', message: 'executable "x" not found' } }),
    ]);
    expect(failed.phase).toBe('finished');
  });

  it('an exit before anything: without a marker, reported once the pipes close, no signal, no look', () => {
    const run = machine({ marked: false });
    expect(run.send(exited(0))).toEqual([start('close', CLOSE_AFTER_EXIT_MS)]);
    expect(run.phase).toBe('exited');
    expect(run.send(closed)).toEqual([finish({ exitCode: 0 })]);
    expect(run.phase).toBe('finished');
  });

  it('an exit before anything: with a marker, one look for leftovers, and nothing signalled when none', () => {
    const run = machine();
    expect(run.send(exited(3))).toEqual([start('close', CLOSE_AFTER_EXIT_MS)]);
    expect(run.send(closed)).toEqual([look]);
    expect(run.phase).toBe('looking-after-close');
    expect(run.send(looked(false))).toEqual([finish({ exitCode: 3 })]);
  });

  it('timeout, then the group exits during the grace: SIGTERM only, reported as timed out', () => {
    const run = machine();
    expect(run.send(fire('deadline'))).toEqual([term, start('kill', 5000)]);
    expect(run.state).toMatchObject({ phase: 'terminating', stoppedBy: 'deadline' });
    expect(run.send(exited(null, 'SIGTERM'))).toEqual([start('close', CLOSE_AFTER_EXIT_MS)]);
    expect(run.phase).toBe('exited-terminating');
    expect(run.send(closed)).toEqual([look]);
    expect(run.phase).toBe('awaiting-survivors');
    expect(run.send(looked(false))).toEqual([finish({ signal: 'SIGTERM', timedOut: true })]);
    // The kill timer is cleared by the finish; were it to fire, nothing more is sent.
    expect(run.send(fire('kill'))).toEqual([]);
  });

  it('timeout, then the grace runs out: SIGKILL to the run, reported as timed out by SIGKILL', () => {
    const run = machine();
    run.send(fire('deadline'));
    expect(run.send(fire('kill'))).toEqual([kill]);
    expect(run.phase).toBe('killing');
    expect(run.send(exited(null, 'SIGKILL'))).toEqual([start('close', CLOSE_AFTER_EXIT_MS)]);
    expect(run.phase).toBe('exited-killing');
    expect(run.send(closed)).toEqual([look]);
    expect(run.phase).toBe('looking-after-kill');
    expect(run.send(looked(false))).toEqual([finish({ signal: 'SIGKILL', timedOut: true })]);
  });

  it('an abort (cancel, lost lease and shutdown all arrive as the AbortSignal) stops the run and says aborted', () => {
    const run = machine();
    expect(run.send(aborted)).toEqual([term, start('kill', 5000)]);
    expect(run.state).toMatchObject({ phase: 'terminating', stoppedBy: 'abort' });
    run.send(exited(null, 'SIGTERM'));
    run.send(closed);
    expect(run.send(looked(false))).toEqual([finish({ signal: 'SIGTERM', aborted: true })]);
  });

  it('double stops: the first reason is kept, and no second SIGTERM or kill timer goes out', () => {
    const run = machine();
    run.send(fire('deadline'));
    for (const event of [aborted, aborted, faulted, fire('deadline')]) expect(run.send(event)).toEqual([]);
    expect(run.state).toMatchObject({ phase: 'terminating', stoppedBy: 'deadline' });
    run.send(fire('kill'));
    expect(run.send(aborted)).toEqual([]); // SIGKILL is not followed by another SIGTERM
    run.send(exited(null, 'SIGKILL'));
    run.send(closed);
    expect(run.send(looked(false))).toEqual([finish({ signal: 'SIGKILL', timedOut: true })]);
  });

  it('a fault (log write failed, onSpawn threw) stops the run, neither timed out nor aborted', () => {
    const run = machine({ marked: false });
    expect(run.send(faulted)).toEqual([term, start('kill', 5000)]);
    expect(run.send(fire('deadline'))).toEqual([]);
    run.send(exited(null, 'SIGTERM'));
    expect(run.send(closed)).toEqual([look]); // unmarked: is the group still there?
    expect(run.send(looked(false))).toEqual([finish({ signal: 'SIGTERM' })]);
  });

  it('a stall (no output for stallTimeoutMs: run-process.ts watches) stops the run and says stalled; a later deadline is no timeout', () => {
    const run = machine({ marked: false });
    expect(run.send({ type: 'stalled' })).toEqual([term, start('kill', 5000)]);
    expect(run.state).toMatchObject({ phase: 'terminating', stoppedBy: 'stall' });
    expect(run.send(fire('deadline'))).toEqual([]);
    expect(run.send({ type: 'stalled' })).toEqual([]);
    run.send(exited(null, 'SIGTERM'));
    expect(run.send(closed)).toEqual([look]);
    expect(run.send(looked(false))).toEqual([finish({ signal: 'SIGTERM', stalled: true })]);
  });

  it('an exit that leaves processes behind stops them at once; a later deadline is no timeout', () => {
    const run = machine();
    expect(run.send(exited(0, null, true))).toEqual([
      term,
      start('kill', 5000),
      start('close', CLOSE_AFTER_EXIT_MS),
    ]);
    expect(run.state).toMatchObject({ phase: 'exited-terminating', stoppedBy: 'leftovers' });
    expect(run.send(fire('deadline'))).toEqual([]);
    run.send(closed);
    expect(run.send(looked(false))).toEqual([finish({ exitCode: 0 })]);
  });

  it('leftovers first seen when the pipes close get SIGTERM and their grace', () => {
    const run = machine();
    run.send(exited(0));
    run.send(closed);
    expect(run.send(looked(true))).toEqual([term, start('kill', 5000), start('look', LOOK_EVERY_MS)]);
    expect(run.state).toMatchObject({ phase: 'awaiting-survivors', stoppedBy: 'leftovers' });
  });

  it('survivors are looked for less and less often, then SIGKILLed and reaped within REAP_AFTER_KILL_MS', () => {
    const run = machine();
    run.send(fire('deadline'));
    run.send(exited(null, 'SIGTERM'));
    expect(run.send(closed)).toEqual([look]);
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const [next, ...rest] = run.send(looked(true));
      expect(rest).toEqual([]);
      expect(next).toMatchObject({ kind: 'start-timer', timer: 'look' });
      waits.push((next as { ms: number }).ms);
      expect(run.send(fire('look'))).toEqual([look]);
    }
    expect(waits).toEqual([25, 50, 100, 200, 400, LOOK_MAX_MS]);
    expect(run.send(fire('kill'))).toEqual([
      kill,
      { kind: 'cancel-timer', timer: 'look' },
      start('reap', REAP_AFTER_KILL_MS),
      look,
    ]);
    expect(run.phase).toBe('reaping');
    expect(run.send(looked(true))).toEqual([start('look', LOOK_EVERY_MS)]);
    expect(run.send(fire('look'))).toEqual([look]);
    expect(run.send(looked(true))).toEqual([start('look', LOOK_EVERY_MS)]);
    // Still there when the reap time is over: reported anyway, never waited for forever.
    expect(run.send(fire('reap'))).toEqual([finish({ signal: 'SIGTERM', timedOut: true })]);
  });

  it('without a marker, the grace running out after the close SIGKILLs the group and reports at once', () => {
    const run = machine({ marked: false });
    run.send(fire('deadline'));
    run.send(exited(null, 'SIGTERM'));
    run.send(closed);
    expect(run.send(looked(true))).toEqual([start('look', LOOK_EVERY_MS)]);
    expect(run.send(fire('kill'))).toEqual([
      kill,
      { kind: 'cancel-timer', timer: 'look' },
      finish({ signal: 'SIGTERM', timedOut: true }),
    ]);
  });

  it('a grandchild holding the pipes open: the close timer SIGKILLs the group and lets the pipes go', () => {
    const unmarked = machine({ marked: false });
    unmarked.send(exited(0));
    expect(unmarked.send(fire('close'))).toEqual([
      { kind: 'signal-group', signal: 'SIGKILL' },
      { kind: 'close-pipes' },
      finish({ exitCode: 0 }),
    ]);

    const marked = machine();
    marked.send(exited(0));
    expect(marked.send(fire('close'))).toEqual([
      { kind: 'signal-group', signal: 'SIGKILL' },
      { kind: 'close-pipes' },
      look,
    ]);
    expect(marked.phase).toBe('looking-after-kill');
    expect(marked.send(looked(true))).toEqual([kill, start('reap', REAP_AFTER_KILL_MS), look]);
    expect(marked.send(looked(true))).toEqual([start('look', LOOK_EVERY_MS)]);
    // The child's own 'close', once the destroyed pipes are closed: already dealt with.
    expect(marked.send(closed)).toEqual([]);
    expect(marked.send(fire('look'))).toEqual([look]);
    expect(marked.send(looked(false))).toEqual([finish({ exitCode: 0 })]);
  });

  it('a stop asked while reaping after a forced close still sends SIGTERM, then SIGKILL when the grace ends', () => {
    const run = machine();
    run.send(exited(0));
    run.send(fire('close'));
    run.send(looked(true));
    expect(run.send(aborted)).toEqual([term, start('kill', 5000)]);
    expect(run.state).toMatchObject({ phase: 'reaping', stoppedBy: 'abort' });
    for (const event of [aborted, fire('deadline'), faulted]) expect(run.send(event)).toEqual([]);
    expect(run.send(fire('kill'))).toEqual([kill, look]);
    expect(run.send(looked(false))).toEqual([finish({ exitCode: 0, aborted: true })]);
  });

  it('timers and answers nobody waits for are ignored', () => {
    const run = machine();
    for (const event of [
      fire('kill'),
      fire('close'),
      fire('look'),
      fire('reap'),
      looked(true),
      spawnFailed,
    ]) {
      const before = run.state;
      expect(run.send(event)).toEqual([]);
      expect(run.state).toBe(before);
    }
    run.send(fire('deadline'));
    run.send(exited(null, 'SIGTERM'));
    run.send(closed);
    run.send(looked(true));
    // Pipes closed already: the close timer and a second close change nothing.
    expect(run.send(fire('close'))).toEqual([]);
    expect(run.send(closed)).toEqual([]);
    expect(run.phase).toBe('awaiting-survivors');
  });

  it('after the end every event is ignored: one attempt is reported once', () => {
    const run = machine();
    run.send(exited(0));
    run.send(closed);
    run.send(looked(false));
    const end = run.state;
    expect(end.phase).toBe('finished');
    for (const event of ALL_EVENTS) {
      expect(transition(end, event)).toEqual({ state: end, actions: [] });
      expect(transition(end, event).state).toBe(end);
    }
  });
});

/**
 * What the driver in run-process.ts does, on a virtual clock: timers fire in due order, each look
 * is answered at once. The child, the pipes, the abort and faults come in any order.
 */
interface World {
  state: SupervisionState;
  now: number;
  /** Pending timers with their due time, in the order they were started. */
  timers: [SupervisionTimer, number][];
  exitAt: number | null;
  closed: boolean;
  spawnFailed: boolean;
  /** When the run or its group was first sent SIGKILL. */
  killedAt: number | null;
  /** How many SIGTERMs the run was sent. */
  terms: number;
  finishes: number;
  outcome: Extract<SupervisionAction, { kind: 'finish' }>['outcome'] | null;
  deadlineFired: boolean;
  abortSeen: boolean;
}

const LOOKING = new Set(['looking-after-close', 'looking-after-kill']);

/** Checks one transition's own promises; returns what is wrong, or undefined. */
function brokenPromise(before: SupervisionState, step: ReturnType<typeof transition>): string | undefined {
  const { actions } = step;
  if (before.phase === 'finished' && (step.state !== before || actions.length > 0))
    return 'acted after the end';
  if (before.stoppedBy !== null && step.state.stoppedBy !== before.stoppedBy) return 'changed why it stopped';
  const finishes = actions.filter((action) => action.kind === 'finish').length;
  if (finishes > 1) return 'finished twice in one step';
  if ((finishes === 1) !== (step.state.phase === 'finished' && before.phase !== 'finished')) {
    return 'a finish action without reaching finished, or the reverse';
  }
  if (finishes === 1 && actions.at(-1)?.kind !== 'finish') return 'acted after its finish';
  const looks = actions.findIndex((action) => action.kind === 'look-for-survivors');
  if (looks !== -1 && looks !== actions.length - 1) return 'a look that is not the last action';
  const { phase } = step.state;
  if (LOOKING.has(phase) && looks === -1) return 'a looking phase with no look to answer';
  if (looks !== -1 && !LOOKING.has(phase) && phase !== 'awaiting-survivors' && phase !== 'reaping') {
    return 'a look nobody waits for';
  }
  return undefined;
}

/** Delivers `event` and performs the actions; each look is answered with every one of `answers`. */
function deliver(
  world: World,
  event: SupervisionEvent,
  answers: readonly boolean[],
  path: string[],
): World[] {
  const step = transition(world.state, event);
  const broken = brokenPromise(world.state, step);
  if (broken)
    throw new Error(`${broken}: ${[...path, world.state.phase, JSON.stringify(event)].join(' → ')}`);
  const next: World = { ...world, state: step.state, timers: [...world.timers] };
  if (event.type === 'aborted') next.abortSeen = true;
  if (event.type === 'timer-fired' && event.timer === 'deadline') next.deadlineFired = true;
  for (const action of step.actions) {
    switch (action.kind) {
      case 'start-timer':
        next.timers = [
          ...next.timers.filter(([t]) => t !== action.timer),
          [action.timer, next.now + action.ms],
        ];
        break;
      case 'cancel-timer':
        next.timers = next.timers.filter(([t]) => t !== action.timer);
        break;
      case 'signal-run':
      case 'signal-group':
        if (action.signal === 'SIGKILL') next.killedAt ??= next.now;
        else next.terms += 1;
        if (next.terms > 1)
          throw new Error(`a second SIGTERM: ${[...path, JSON.stringify(event)].join(' → ')}`);
        break;
      case 'close-pipes':
        break;
      case 'finish':
        next.finishes += 1;
        next.outcome = action.outcome;
        next.timers = [];
        break;
      case 'look-for-survivors':
        return answers.flatMap((survivors) =>
          deliver(next, { type: 'looked', survivors }, answers, [...path, JSON.stringify(event)]),
        );
    }
  }
  return [next];
}

/** The events that can come next, each with the world it comes in (a timer moves the clock). */
function nextEvents(world: World, spawned: boolean): [World, SupervisionEvent][] {
  const here: SupervisionEvent[] = [aborted, faulted, { type: 'stalled' }];
  if (!spawned && !world.spawnFailed) here.push(spawnFailed);
  if (spawned && world.exitAt === null) {
    const signal = world.killedAt === null ? null : 'SIGKILL';
    here.push(exited(signal ? null : 0, signal, false), exited(signal ? null : 0, signal, true));
  }
  // Node's 'close' comes once, after the exit (after the error for a spawn failure).
  if ((world.exitAt !== null || world.spawnFailed) && !world.closed) here.push(closed);
  const pairs = here.map((event): [World, SupervisionEvent] => [world, event]);
  const due = world.timers.reduce<[SupervisionTimer, number] | undefined>(
    (first, timer) => (first === undefined || timer[1] < first[1] ? timer : first),
    undefined,
  );
  if (due) {
    const [timer, at] = due;
    pairs.push([{ ...world, now: at, timers: world.timers.filter(([t]) => t !== timer) }, fire(timer)]);
  }
  return pairs;
}

function record(world: World, event: SupervisionEvent): World {
  if (event.type === 'exited') return { ...world, exitAt: world.now };
  if (event.type === 'closed') return { ...world, closed: true };
  if (event.type === 'spawn-failed') return { ...world, spawnFailed: true };
  return world;
}

/** What a world's future comes to in the worst case (see worstCaseEnd). */
interface End {
  finishes: number;
  phase: string;
  now: number;
  exitAt: number | null;
  killedAt: number | null;
}

const keyOf = (world: World) => JSON.stringify({ ...world, state: { ...world.state, settings: undefined } });

/**
 * The worst case from here: the child ignores SIGTERM and exits only when SIGKILLed, a grandchild
 * holds its pipes until they are let go, and every look finds survivors. Worlds on the way are
 * remembered in `ends`: the exploration reaches most of them again.
 */
function worstCaseEnd(world: World, spawned: boolean, ends: Map<string, End>): End {
  const visited: string[] = [];
  let current = world;
  let end: End | undefined;
  for (let i = 0; i < 10_000; i++) {
    const key = keyOf(current);
    end = ends.get(key);
    if (end) break;
    visited.push(key);
    if (current.finishes > 0) break;
    let event: SupervisionEvent;
    let at = current;
    if (!spawned) event = spawnFailed;
    else if (current.exitAt === null && current.killedAt !== null) event = exited(null, 'SIGKILL', true);
    else {
      const pair = nextEvents(current, spawned).find(([, e]) => e.type === 'timer-fired');
      if (!pair) break; // nothing can happen any more: stuck
      [at, event] = pair;
    }
    // One answer to every look: one world.
    current = deliver(record(at, event), event, [true], ['(worst case)'])[0]!;
  }
  end ??= { ...current, phase: current.state.phase };
  for (const key of visited) ends.set(key, end);
  return end;
}

describe('supervision, every order of events', () => {
  const variants = [
    { timeoutMs: 1000, killGraceMs: 300 },
    { timeoutMs: 1000, killGraceMs: 5000 },
    { timeoutMs: 3000, killGraceMs: 1000 },
    { timeoutMs: 100, killGraceMs: 0 },
  ].flatMap((times) =>
    [true, false].flatMap((marked) => [true, false].map((spawned) => ({ ...times, marked, spawned }))),
  );

  it.each(
    variants,
  )('marked $marked, spawned $spawned, timeout $timeoutMs ms, grace $killGraceMs ms: one report, always, in bounded time', ({
    spawned,
    ...settings
  }) => {
    const first = startSupervision(settings, spawned);
    const initial: World = {
      state: first.state,
      now: 0,
      timers: first.actions.flatMap((a) =>
        a.kind === 'start-timer' ? [[a.timer, a.ms] as [SupervisionTimer, number]] : [],
      ),
      exitAt: null,
      closed: false,
      spawnFailed: false,
      killedAt: null,
      terms: 0,
      finishes: 0,
      outcome: null,
      deadlineFired: false,
      abortSeen: false,
    };
    const seen = new Set<string>();
    const ends = new Map<string, End>();
    const queue: World[] = [initial];
    let finishedPaths = 0;
    while (queue.length > 0) {
      const world = queue.pop()!;
      const key = keyOf(world);
      if (seen.has(key)) continue;
      seen.add(key);
      expect(seen.size).toBeLessThan(200_000); // the space is finite: a bug would loop
      expect(world.finishes).toBeLessThanOrEqual(1);
      if (world.finishes === 1) {
        finishedPaths += 1;
        const outcome = world.outcome!;
        // A timeout or an abort is only reported when one happened, and never both.
        if (outcome.timedOut) expect(world.deadlineFired).toBe(true);
        if (outcome.aborted) expect(world.abortSeen).toBe(true);
        expect(outcome.timedOut && outcome.aborted).toBe(false);
        // Nothing after the end: every event is ignored (checked by deliver), so no need to go on.
        for (const event of ALL_EVENTS) deliver(world, event, [true, false], ['(finished)']);
        continue;
      }
      // Whatever came so far, the run still ends, once, within its bounds.
      const end = worstCaseEnd(world, spawned, ends);
      expect(end.finishes, `stuck in ${end.phase} at ${end.now} ms`).toBe(1);
      if (spawned) {
        // SIGKILL by timeoutMs + grace at the latest; the report at most CLOSE + grace + REAP after the exit.
        expect(end.killedAt ?? 0).toBeLessThanOrEqual(settings.timeoutMs + settings.killGraceMs);
        expect(end.now).toBeLessThanOrEqual(
          end.exitAt! + CLOSE_AFTER_EXIT_MS + settings.killGraceMs + REAP_AFTER_KILL_MS,
        );
      }
      for (const [at, event] of nextEvents(world, spawned)) {
        const reached = deliver(record(at, event), event, [true, false], []);
        for (const next of reached) {
          // A look is answered within the step: no looking phase outlives an event.
          expect(LOOKING.has(next.state.phase)).toBe(false);
          queue.push(next);
        }
      }
    }
    expect(finishedPaths).toBeGreaterThan(spawned ? 10 : 0);
  });
});
