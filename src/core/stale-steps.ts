import { planIndex, type RunState, SATISFIED_STEP_STATUSES } from './run-state.js';

/**
 * Steps whose result rests on an older result of a step before them (after `rerun --only`): a
 * settled step one of whose dependencies started again after it did (a fan-out counts its items'
 * starts), or whose dependency is itself stale. Derived from the steps' states, so it needs no
 * record of its own and ends as soon as the step runs again. A fork's kept steps (never started in
 * their run) are never stale.
 */
export function staleSteps(run: Pick<RunState, 'plan' | 'steps'>): string[] {
  const { plan, steps } = run;
  const { position } = planIndex(plan);
  const latestStart = (at: number): number => {
    const step = plan.steps[at]!;
    let latest = steps[at]!.startedAt ?? Number.NEGATIVE_INFINITY;
    // A fan-out's items are contiguous from `<id>[0]` (core/for-each.ts); found here without loading CEL.
    const first = step.forEach ? position.get(`${step.id}[0]`) : undefined;
    for (let i = first ?? plan.steps.length; plan.steps[i]?.forEachItem?.group === step.id; i += 1)
      latest = Math.max(latest, steps[i]!.startedAt ?? latest);
    return latest;
  };
  // In dependency order (Kahn), so a long chain needs no deep recursion.
  const waiting = plan.steps.map((step) => step.dependsOn.length);
  const order = plan.steps.flatMap((_, at) => (waiting[at] === 0 ? [at] : []));
  const { dependents } = planIndex(plan);
  for (let next = 0; next < order.length; next += 1) {
    for (const dependent of dependents.get(plan.steps[order[next]!]!.id) ?? []) {
      const at = position.get(dependent)!;
      waiting[at]! -= 1;
      if (waiting[at] === 0) order.push(at);
    }
  }
  const stale = new Set<number>();
  for (const at of order) {
    const state = steps[at]!;
    if (!SATISFIED_STEP_STATUSES.has(state.status) || state.startedAt === null) continue;
    const startedAt = state.startedAt;
    const rests = plan.steps[at]!.dependsOn.some((dep) => {
      const depAt = position.get(dep)!;
      return stale.has(depAt) || latestStart(depAt) > startedAt;
    });
    if (rests) stale.add(at);
  }
  const found = [...stale].sort((a, b) => a - b).map((at) => plan.steps[at]!.id);
  return found;
}
