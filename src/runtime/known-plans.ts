import { BatonError } from '../core/errors.js';
import { declaredPlan } from '../core/fork.js';
import { MAX_PLAN_NESTING, type Plan } from '../core/plan/types.js';
import { checkChildInputs, planNesting } from '../core/sub-plans.js';
import { NO_STEPS, type Store } from '../store/store.js';

/**
 * Sub-plans named by `plan: { name }`: "a plan Baton already knows". Found when the run starts (a
 * plan file's `path:` children are read with the file), so each door that starts runs (`baton run`,
 * `propose`, `schedule add`, `Baton.startPlan`, the MCP server) resolves them with `withKnownPlans`
 * before its one prepareRun; a child run then runs the plan as it was found, embedded in its
 * parent's snapshot, whatever is stored later under that name.
 */

/** Finds the plan of a name, or null. */
export type PlanLookup = (name: string) => Promise<Plan | null>;

/** Whether `plan` (or a child plan in it) names a sub-plan not found yet. */
export function namesUnknownPlans(plan: Plan): boolean {
  return plan.steps.some((step) =>
    step.subPlan ? (step.subPlan.plan ? namesUnknownPlans(step.subPlan.plan) : true) : false,
  );
}

/**
 * The plans a home knows by name, in this order: a schedule's plan of that name (the newest one
 * changed), else the plan of the newest run of that name, as declared (without a fan-out's items,
 * cleanup steps, or the parent of a child run).
 */
export function homePlans(
  store: Pick<Store, 'listSchedules' | 'getSchedule' | 'listRuns' | 'getRunSteps'>,
): PlanLookup {
  return async (name) => {
    const schedules = (await store.listSchedules()).filter((schedule) => schedule.planName === name);
    schedules.sort((a, b) => b.updatedAt - a.updatedAt);
    const schedule = schedules[0];
    if (schedule) {
      const detail = await store.getSchedule(schedule.name);
      if (detail) return asDeclared(detail.plan);
    }
    const [newest] = await store.listRuns({ planName: name, limit: 1 });
    if (!newest) return null;
    const run = await store.getRunSteps(newest.id, NO_STEPS);
    return run ? asDeclared(run.plan) : null;
  };
}

/** Tries each lookup in turn. */
export function firstOf(...lookups: PlanLookup[]): PlanLookup {
  return async (name) => {
    for (const lookup of lookups) {
      const plan = await lookup(name);
      if (plan) return plan;
    }
    return null;
  };
}

function asDeclared(plan: Plan): Plan {
  const { parent: _parent, shadow: _shadow, ...rest } = declaredPlan(plan);
  return rest;
}

/**
 * `plan` with the child plan of each `plan: { name }` step found by `lookup` and kept in it,
 * recursively (in child plans too). Refuses, naming the step: a name nothing knows, a plan that
 * runs itself (a name among the plans it is nested in), nesting deeper than MAX_PLAN_NESTING, and
 * child inputs the child does not declare or lacks. `source` prefixes messages (a plan file's name).
 */
export async function withKnownPlans(plan: Plan, lookup: PlanLookup, source = ''): Promise<Plan> {
  if (!namesUnknownPlans(plan)) return plan;
  const resolved = await resolveIn(plan, lookup, source, []);
  const nesting = planNesting(resolved);
  if (nesting > MAX_PLAN_NESTING)
    throw new BatonError(
      'PLAN_INVALID',
      `${source}plans nest ${nesting} deep, more than the ${MAX_PLAN_NESTING} a run may (${deepestChain(resolved).join(' -> ')})`,
    );
  return resolved;
}

async function resolveIn(
  plan: Plan,
  lookup: PlanLookup,
  where: string,
  above: readonly string[],
): Promise<Plan> {
  if (!namesUnknownPlans(plan)) return plan;
  const chain = [...above, plan.name];
  const steps = [];
  for (const step of plan.steps) {
    const spec = step.subPlan;
    if (!spec || (spec.plan && !namesUnknownPlans(spec.plan))) {
      steps.push(step);
      continue;
    }
    const at = `${where}steps.${step.id}.plan`;
    let child = spec.plan;
    if (!child) {
      const name = spec.name ?? '';
      if (chain.includes(name)) {
        const loop = [...chain.slice(chain.indexOf(name)), name];
        throw new BatonError('PLAN_INVALID', `${at}.name: ${loop.join(' -> ')}: a plan may not run itself`);
      }
      if (chain.length >= MAX_PLAN_NESTING)
        throw new BatonError(
          'PLAN_INVALID',
          `${at}.name: plans nest deeper than ${MAX_PLAN_NESTING} (${[...chain, name].join(' -> ')})`,
        );
      child = (await lookup(name)) ?? undefined;
      if (!child)
        throw new BatonError(
          'PLAN_NOT_FOUND',
          `${at}.name: no plan named "${name}" is known here: register its workflow, add a schedule of it, or run it once (or give plan.path, its file)`,
        );
      checkChildInputs(child, spec.inputs, `${at}.inputs`);
    }
    child = await resolveIn(child, lookup, `${at}(${child.name}): `, chain);
    steps.push({ ...step, subPlan: { ...spec, plan: child } });
  }
  return { ...plan, steps };
}

function deepestChain(plan: Plan): string[] {
  let deepest: string[] = [];
  for (const step of plan.steps) {
    const child = step.subPlan?.plan;
    if (!child) continue;
    const chain = deepestChain(child);
    if (chain.length > deepest.length) deepest = chain;
  }
  return [plan.name, ...deepest];
}
