import { BatonError } from './errors.js';
import { renderTemplate } from './plan/template.js';
import type { Plan } from './plan/types.js';
import type { StepResult, StepState } from './run-state.js';

/**
 * Sub-plans: a step with `plan: { path, inputs }` runs another plan as a child run. Its attempt
 * starts the child (once: the child's id is derived from the parent run, the step and when the
 * step's current run of attempts began) and waits for it without holding a worker slot; a worker
 * killed meanwhile leaves the child running, and the attempt that reclaims the step finds it. A
 * rerun of the step starts a fresh child (its attempts begin anew). The step succeeds with the
 * child's results once the child succeeded, and fails (not retried) when it failed or was cancelled;
 * the child's spend counts in the parent's budgets.
 */

/** FNV-1a over the text, as 8 base-36 digits: a tag that tells children apart, not a secret. */
function tag(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36).padStart(7, '0').slice(-7);
}

/**
 * The id of the child run of `stepId` in `parentRunId` whose attempts began at `firstStartedAt`:
 * `<parent>-<step>-<tag>` (a fan-out item's brackets as `_`), within the 64 characters of a run id.
 */
export function childRunId(parentRunId: string, stepId: string, firstStartedAt: number): string {
  const suffix = `-${tag(`${parentRunId}\u0000${stepId}\u0000${firstStartedAt}`)}`;
  const base = `${parentRunId}-${stepId}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${base.slice(0, 64 - suffix.length)}${suffix}`;
}

/** The plan a child run stores: the child plan marked with its parent, in its parent's workspace. */
export function childPlan(plan: Plan, parent: { runId: string; stepId: string }): Plan {
  const { workspace: _workspace, ...rest } = plan;
  return { ...rest, parent };
}

/**
 * What a succeeded child gives its parent step: its plan's `output:` rendered over its steps'
 * results, else each of its declared steps' result (its structured value, else its summary), by
 * step id; a fan-out's items are in their group's list, and cleanup steps are left out. Throws
 * PLAN_INVALID when the output names what the child does not have.
 */
export function childOutput(
  child: { id: string; workspace: string; inputs: Record<string, string>; plan: Plan },
  steps: readonly Pick<StepState, 'stepId' | 'resultJson'>[],
): unknown {
  const { plan } = child;
  if (plan.output === undefined) return stepResults(plan, steps);
  const results: Record<string, { summary: string; outputs: string[]; value?: unknown }> = {};
  for (const state of steps) {
    if (!state.resultJson) continue;
    const result = JSON.parse(state.resultJson) as StepResult;
    results[state.stepId] = {
      summary: result.summary,
      outputs: result.outputs.map((output) => output.path),
      ...(result.value === undefined ? {} : { value: result.value }),
    };
  }
  return renderTemplate(plan.output, {
    run: { id: child.id, workspace: child.workspace },
    inputs: child.inputs,
    steps: results,
  });
}

function stepResults(
  plan: Plan,
  steps: readonly Pick<StepState, 'stepId' | 'resultJson'>[],
): Record<string, unknown> {
  const output: Record<string, unknown> = {};
  const byId = new Map(steps.map((step) => [step.stepId, step]));
  for (const step of plan.steps) {
    if (step.forEachItem || step.cleanup) continue;
    const state = byId.get(step.id);
    if (!state?.resultJson) continue;
    const result = JSON.parse(state.resultJson) as StepResult;
    output[step.id] = result.value !== undefined ? result.value : result.summary;
  }
  return output;
}

/**
 * Refuses child inputs (`plan: { inputs }`, at `where`) that the child plan does not declare, and a
 * child input without a default that is not given: found when the parent starts, not hours later.
 */
export function checkChildInputs(child: Plan, given: Readonly<Record<string, string>>, where: string): void {
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(child.inputs, name)) {
      const declared = Object.keys(child.inputs);
      throw new BatonError(
        'PLAN_INVALID',
        `${where}.${name}: plan ${child.name} declares no input "${name}" (its inputs: ${declared.length > 0 ? declared.join(', ') : 'none'})`,
      );
    }
  }
  for (const [name, input] of Object.entries(child.inputs)) {
    if (input.default === undefined && !Object.hasOwn(given, name))
      throw new BatonError(
        'PLAN_INVALID',
        `${where}: plan ${child.name} needs input "${name}": add ${name}: <value>`,
      );
  }
}

/** How many plans nest in `plan`: 1 for a plan without sub-plans whose child plans are known. */
export function planNesting(plan: Plan): number {
  let deepest = 0;
  for (const step of plan.steps) {
    const child = step.subPlan?.plan;
    if (child) deepest = Math.max(deepest, planNesting(child));
  }
  return 1 + deepest;
}
