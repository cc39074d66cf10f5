import { type FlowGate, flowKeyOf } from '../core/flow.js';
import type { PlanStep } from '../core/plan/types.js';
import type { RunState, StepState } from '../core/run-state.js';

/** Keys by plan step (plans are immutable snapshots): [own executor's, fallback's]. */
const keyCache = new WeakMap<PlanStep, [string | undefined, string | undefined]>();

/** The flow key of what a step of `run` runs next (written with every step row as `flow_key`). */
export function stepFlowKey(run: Pick<RunState, 'plan' | 'steps'>, position: number): string {
  const planStep = run.plan.steps[position]!;
  const onFallback = run.steps[position]!.onFallback === true;
  let cached = keyCache.get(planStep);
  if (!cached) {
    cached = [undefined, undefined];
    keyCache.set(planStep, cached);
  }
  const index = onFallback ? 1 : 0;
  cached[index] ??= flowKeyOf(planStep, onFallback);
  return cached[index];
}

function runningUnder(run: RunState, key: string): number {
  let count = 0;
  run.steps.forEach((step: StepState, position) => {
    if (step.status === 'running' && stepFlowKey(run, position) === key) count++;
  });
  return count;
}

/** A run a store transaction holds in memory: as it loaded it, and as this transaction changed it. */
export interface HeldRun {
  loaded: RunState;
  state: RunState;
}

/**
 * Attempts under `key` that the transaction's own changes started minus those they ended
 * (completions, reclaimed leases, claims), over the runs it holds: what the store's counts, read
 * before those changes are written, are off by.
 */
export function runningDelta(key: string, held: Iterable<HeldRun>): number {
  let delta = 0;
  for (const run of held) {
    if (run.state === run.loaded) continue;
    delta += runningUnder(run.state, key) - runningUnder(run.loaded, key);
  }
  return delta;
}

/**
 * Whether a claim of the step at `position` passes flow control. Call before the claim transition
 * is applied (the delta counts the step as not running yet), and `flowStarted` once it ran.
 */
export function flowAllows(
  gate: FlowGate | null,
  run: RunState,
  position: number,
  held: () => Iterable<HeldRun>,
): boolean {
  if (!gate) return true;
  const key = stepFlowKey(run, position);
  return !gate.has(key) || gate.allows(key, runningDelta(key, held()));
}

/** Records the start of a claimed attempt against its key's rate. */
export function flowStarted(gate: FlowGate | null, run: RunState, position: number): void {
  gate?.started(stepFlowKey(run, position));
}

/** Limited keys of the steps of `loaded` that stopped running in `state`: slots freed for other workers. */
export function freedLimitedKeys(held: HeldRun, limited: ReadonlySet<string>): Set<string> {
  const freed = new Set<string>();
  if (limited.size === 0 || held.state === held.loaded) return freed;
  held.loaded.steps.forEach((step, position) => {
    if (step.status !== 'running' || held.state.steps[position]!.status === 'running') return;
    const key = stepFlowKey(held.loaded, position);
    if (limited.has(key)) freed.add(key);
  });
  return freed;
}
