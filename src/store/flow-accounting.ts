import { type FlowGate, flowKeyOf } from '../core/flow.js';
import { DUE_STEP_STATUSES, type RunState, type StepState } from '../core/run-state.js';

/** The flow key of what a step of `run` runs next (written with every step row as `flow_key`). */
export function stepFlowKey(run: Pick<RunState, 'plan' | 'steps'>, position: number): string {
  const step = run.steps[position]!;
  return flowKeyOf(run.plan.steps[position]!, step.onFallback === true);
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

/** Flow keys of the steps of `run` due at `now`: the keys a claim in it may need. */
export function dueFlowKeys(run: RunState, now: number, into: Set<string>): void {
  run.steps.forEach((step, position) => {
    if (DUE_STEP_STATUSES.has(step.status) && step.dueAt !== null && step.dueAt <= now)
      into.add(stepFlowKey(run, position));
  });
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

/** Steps of `loaded` that stopped running under a limited key in `state`: a slot freed for other workers. */
export function freedLimitedSlot(held: HeldRun, limited: ReadonlySet<string>): boolean {
  if (limited.size === 0 || held.state === held.loaded) return false;
  return held.loaded.steps.some(
    (step, position) =>
      step.status === 'running' &&
      held.state.steps[position]!.status !== 'running' &&
      limited.has(stepFlowKey(held.loaded, position)),
  );
}
