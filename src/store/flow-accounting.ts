import { type FlowGate, type FlowLimit, flowKeyOf } from '../core/flow.js';
import { listTemplateRefs } from '../core/plan/template.js';
import type { PlanStep } from '../core/plan/types.js';
import type { RunState, StepState } from '../core/run-state.js';
import { renderRunText } from '../core/run-text.js';

/** Keys by plan step (plans are immutable snapshots): [own executor's, fallback's]. */
const keyCache = new WeakMap<PlanStep, [string | undefined, string | undefined]>();

/**
 * Rendered keyed-flow keys (`flow.key` templates). A key over inputs and the run alone is rendered
 * once per run (by its inputs object, which its states share); one over step results once per
 * state of the run's steps.
 */
const renderedByInputs = new WeakMap<object, Map<string, string>>();
const renderedBySteps = new WeakMap<readonly StepState[], Map<string, string>>();
const NO_INPUTS = {};
/** Whether a key template reads step results, by template text. */
const readsResults = new Map<string, boolean>();

/** Longest flow key a template renders to; longer ones are cut (keys are row values, not text to show). */
const MAX_RENDERED_KEY = 200;

/**
 * The flow key of what a step of `run` runs next (written with every step row as `flow_key`). A
 * keyed flow's key (`flow.key`, a template) is rendered over the run's inputs and the results of
 * its steps; one that cannot be rendered yet counts as the template itself (one key for all such
 * steps, under the same limit).
 */
export function stepFlowKey(run: FlowRun, position: number): string {
  const planStep = run.plan.steps[position]!;
  const onFallback = run.steps[position]!.onFallback === true;
  let cached = keyCache.get(planStep);
  if (!cached) {
    cached = [undefined, undefined];
    keyCache.set(planStep, cached);
  }
  const index = onFallback ? 1 : 0;
  cached[index] ??= flowKeyOf(planStep, onFallback);
  const key = cached[index];
  if (onFallback || planStep.flow === undefined || !key.includes('{{')) return key;
  let results = readsResults.get(key);
  if (results === undefined) {
    results = listTemplateRefs(key).some((ref) => ref.path[0] === 'steps');
    if (readsResults.size < 10_000) readsResults.set(key, results);
  }
  const scope = results ? renderedBySteps : renderedByInputs;
  const owner = results ? run.steps : (run.inputs ?? NO_INPUTS);
  let rendered = (scope as WeakMap<object, Map<string, string>>).get(owner);
  if (!rendered) {
    rendered = new Map();
    (scope as WeakMap<object, Map<string, string>>).set(owner, rendered);
  }
  const slot = `${run.id ?? ''}\u0000${key}`;
  let text = rendered.get(slot);
  if (text === undefined) {
    const result = renderRunText(
      { id: run.id ?? '', inputs: run.inputs, steps: results ? run.steps : [] },
      key,
    );
    text = 'text' in result ? result.text.slice(0, MAX_RENDERED_KEY) || key : key;
    rendered.set(slot, text);
  }
  return text;
}

/** A run as flow accounting reads it: its plan and steps, and its id and inputs for keyed flows. */
export type FlowRun = Pick<RunState, 'plan' | 'steps'> & Partial<Pick<RunState, 'id' | 'inputs'>>;

/**
 * The limit a step's plan declares for its key (`flow: { key, concurrency, rate }`), as a flow
 * limit of the key rendered for it; null when it declares none (or its fallback runs).
 */
export function declaredFlowLimit(run: FlowRun, position: number): FlowLimit | null {
  const flow = run.plan.steps[position]!.flow;
  if (!flow || run.steps[position]!.onFallback === true) return null;
  if (flow.concurrency === undefined && flow.rate === undefined) return null;
  return { key: stepFlowKey(run, position), concurrency: flow.concurrency ?? null, rate: flow.rate ?? null };
}

/** Attempts running under each key in a run state, counted once per state (states are immutable). */
const runningByKey = new WeakMap<RunState, Map<string, number>>();

function runningUnder(run: RunState, key: string): number {
  let counts = runningByKey.get(run);
  if (!counts) {
    counts = new Map();
    const steps = run.steps;
    for (let position = 0; position < steps.length; position++) {
      if (steps[position]!.status !== 'running') continue;
      const stepKey = stepFlowKey(run, position);
      counts.set(stepKey, (counts.get(stepKey) ?? 0) + 1);
    }
    runningByKey.set(run, counts);
  }
  return counts.get(key) ?? 0;
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
 * is applied (the delta counts the step as not running yet), and `flowStarted` once it ran. A step
 * whose plan declares a limit for a key the store holds no limit for yet is not admitted: `declare`
 * is told, the store records the limit with this cycle, and the next cycle counts under it.
 */
export function flowAllows(
  gate: FlowGate | null,
  run: RunState,
  position: number,
  held: () => Iterable<HeldRun>,
  declare: (limit: FlowLimit) => void = () => undefined,
): boolean {
  const key = stepFlowKey(run, position);
  if (!gate?.has(key)) {
    const declared = declaredFlowLimit(run, position);
    if (declared === null) return true;
    declare(declared);
    return false;
  }
  return gate.allows(key, runningDelta(key, held()));
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
