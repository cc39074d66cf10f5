import { BatonError } from './errors.js';
import { fallbackPlanStep } from './fallback.js';
import { parseDurationMs } from './plan/duration.js';
import { FLOW_KEY_PATTERN, type PlanStep } from './plan/types.js';

export { FLOW_KEY_PATTERN };

/**
 * Flow control across every run and every worker sharing a store: a named key (by default the
 * executor a step runs: `claude`, `openai`, `fn:fetch`) may have a concurrency limit (attempts
 * running at once) and a rate limit (attempts started in any sliding window). Limits live in the
 * store, so all workers obey the same ones; steps over a limit stay due until a slot frees.
 */
export interface FlowLimit {
  key: string;
  /** Attempts under this key running at once, across all runs and workers; null: no limit. */
  concurrency: number | null;
  /** At most `count` attempts started in any `windowMs`; null: no limit. */
  rate: FlowRate | null;
}

export interface FlowRate {
  count: number;
  windowMs: number;
}

/** The key an agent step falls under when the plan names no agent command (the process default runs it). */
const DEFAULT_AGENT_FLOW_KEY = 'agent';

/** The flow key of every wait step (steps.flow_key): what a cycle looks for to start due waits. */
export const WAIT_FLOW_KEY = 'wait';

/**
 * The flow key of what a step runs: `wait` for a wait step; its `flowKey` if set; otherwise, for an agent step, the base
 * name of its command (`/usr/local/bin/claude` -> `claude`), for a model step its provider
 * (`openai`, `anthropic`), for a function step `fn:<name>`. Once the step's fallback took over
 * (`onFallback`), the key of the fallback's executor.
 */
export function flowKeyOf(step: PlanStep, onFallback = false): string {
  if (onFallback && step.fallback) return flowKeyOf(fallbackPlanStep(step));
  // Never counted (a wait step holds no lease), but a key of its own, whatever `defaults.flowKey`
  // says, keeps it out of the agents' and lets a cycle find a due wait by its row (WAIT_FLOW_KEY).
  if (step.kind === 'wait') return WAIT_FLOW_KEY;
  // A keyed flow's key as written: a template, rendered for each run (store/flow-accounting.ts).
  if (step.flow !== undefined) return step.flow.key;
  if (step.flowKey !== undefined) return step.flowKey;
  switch (step.kind) {
    case 'model':
      return step.model?.provider ?? 'model';
    case 'fn':
      return `fn:${step.fn ?? ''}`;
    case 'plan':
      // Its child's steps count against their own keys: the step itself only waits.
      return 'plan';
    default:
      return agentProgramName(step);
  }
}

/** An agent step's CLI: the base name of its program (`/usr/local/bin/claude` -> `claude`). */
export function agentProgramName(step: PlanStep): string {
  const program = step.agent?.command[0];
  if (program === undefined) return DEFAULT_AGENT_FLOW_KEY;
  const base =
    program
      .split(/[\\/]/)
      .pop()
      ?.replace(/\.(exe|cmd|bat)$/i, '') ?? '';
  return FLOW_KEY_PATTERN.test(base) ? base : DEFAULT_AGENT_FLOW_KEY;
}

/** Unit words a rate's window may use besides the duration units (ms, s, m, h, d), plural too. */
const RATE_UNITS: Record<string, string> = {
  sec: 's',
  second: 's',
  min: 'm',
  minute: 'm',
  hour: 'h',
  hr: 'h',
  day: 'd',
};

/**
 * Parses a rate such as `10/1m`, `10/min`, `100/h`, `1/2m` (at most 1 start in 2 minutes) or
 * `5000/1hour`: starts, a slash, then a window (a number, 1 when left out, and a unit).
 */
export function parseFlowRate(text: string, where: string): FlowRate {
  const match = /^\s*(\d+)\s*\/\s*(\d+(?:\.\d+)?)?\s*([a-z]+)\s*$/i.exec(text);
  const count = match ? Number(match[1]) : Number.NaN;
  const word = (match?.[3] ?? '').toLowerCase();
  const unit = RATE_UNITS[word] ?? RATE_UNITS[word.replace(/s$/, '')] ?? word;
  let windowMs = Number.NaN;
  try {
    windowMs = parseDurationMs(`${match?.[2] ?? '1'}${unit}`, where);
  } catch {
    // Reported below with the whole rate.
  }
  if (!Number.isSafeInteger(count) || count < 1 || count > 1_000_000 || !(windowMs >= 1000)) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: ${JSON.stringify(text)} is not a rate: use <starts>/<window> with at least 1 start and a window of at least 1s, e.g. 10/1m, 10/min, 100/h or 1/2m`,
    );
  }
  return { count, windowMs };
}

/** `10/1m`-style text of a rate, as `baton flow list` prints it. */
export function formatFlowRate(rate: FlowRate): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1000, 's'],
  ];
  for (const [ms, unit] of units) {
    if (rate.windowMs % ms === 0) return `${rate.count}/${rate.windowMs / ms}${unit}`;
  }
  return `${rate.count}/${rate.windowMs}ms`;
}

/** Checks a flow key and limit given by a person (CLI or API); throws a BatonError naming the problem. */
export function validateFlowLimit(limit: FlowLimit): FlowLimit {
  if (!FLOW_KEY_PATTERN.test(limit.key)) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `flow key ${JSON.stringify(limit.key)}: use 1-100 letters, digits or "._:@/-", e.g. claude, openai, fn:fetch`,
    );
  }
  const { concurrency, rate } = limit;
  if (
    concurrency !== null &&
    (!Number.isSafeInteger(concurrency) || concurrency < 1 || concurrency > 100_000)
  ) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `flow ${limit.key}: concurrency must be a whole number from 1 to 100000, got ${concurrency}`,
    );
  }
  if (
    rate !== null &&
    (!Number.isSafeInteger(rate.count) ||
      rate.count < 1 ||
      rate.count > 1_000_000 ||
      !Number.isSafeInteger(rate.windowMs) ||
      rate.windowMs < 1000)
  ) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `flow ${limit.key}: a rate needs 1 to 1000000 starts in a window of at least 1s, got ${rate.count} in ${rate.windowMs} ms`,
    );
  }
  if (concurrency === null && rate === null) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `flow ${limit.key}: give a concurrency, a rate or both, e.g. at most 2 at once and 10 per minute (baton flow set ${limit.key} --concurrency 2 --rate 10/1m); to remove a limit: baton flow rm ${limit.key}`,
    );
  }
  return limit;
}

/** The starts of a key that still count at `now`: within the window, the latest `count` at most. */
export function liveStarts(rate: FlowRate | null, starts: readonly number[], now: number): number[] {
  if (rate === null) return [];
  const live = starts.filter((at) => at > now - rate.windowMs).sort((a, b) => a - b);
  return live.slice(Math.max(0, live.length - rate.count));
}

/** A key's limit as one cycle sees it after locking it: attempts running then and recent starts. */
export interface FlowKeyState {
  limit: FlowLimit;
  /** Attempts under the key running as the store holds it, before this cycle's own changes. */
  running: number;
  starts: number[];
}

/**
 * The flow accounting of one store transaction that holds the locks of the keys it gates. The
 * caller passes, at each check, how many attempts under the key its own in-memory changes started
 * minus stopped (completions, reclaimed leases and claims of this transaction, not yet written).
 */
export class FlowGate {
  private readonly keys = new Map<string, FlowKeyState & { changed: boolean }>();
  /** Limited keys this transaction could not lock (another worker is admitting under them now). */
  private readonly blocked = new Set<string>();

  constructor(
    keys: Iterable<FlowKeyState>,
    private readonly now: number,
  ) {
    this.add(keys);
  }

  /** Keys locked later in the same transaction. */
  add(keys: Iterable<FlowKeyState>): void {
    for (const state of keys) {
      this.keys.set(state.limit.key, {
        ...state,
        starts: liveStarts(state.limit.rate, state.starts, this.now),
        changed: false,
      });
      this.blocked.delete(state.limit.key);
    }
  }

  /** A limited key whose lock another transaction holds: nothing is admitted under it in this one. */
  block(key: string): void {
    if (!this.keys.has(key)) this.blocked.add(key);
  }

  /** Whether this transaction locked the key (and so counts it exactly). */
  holds(key: string): boolean {
    return this.keys.has(key);
  }

  has(key: string): boolean {
    return this.keys.has(key) || this.blocked.has(key);
  }

  /** Whether one more attempt under `key` may start now; `runningDelta` as described above. */
  allows(key: string, runningDelta: number): boolean {
    if (this.blocked.has(key)) return false;
    const state = this.keys.get(key);
    if (!state) return true;
    const { concurrency, rate } = state.limit;
    if (concurrency !== null && state.running + runningDelta >= concurrency) return false;
    if (rate !== null && state.starts.length >= rate.count) return false;
    return true;
  }

  /** Keys at their limit now; `runningDelta(key)` as for `allows`. */
  saturatedKeys(runningDelta: (key: string) => number): string[] {
    return [...this.keys.keys(), ...this.blocked].filter((key) => !this.allows(key, runningDelta(key)));
  }

  /** Records that an attempt under `key` started now (call after `allows` said yes). */
  started(key: string): void {
    const state = this.keys.get(key);
    if (!state?.limit.rate) return;
    state.starts.push(this.now);
    state.changed = true;
  }

  /** Keys whose starts this cycle changed, with the starts to store. */
  changedStarts(): { key: string; starts: number[] }[] {
    return [...this.keys.values()]
      .filter((state) => state.changed)
      .map((state) => ({ key: state.limit.key, starts: state.starts }));
  }
}
