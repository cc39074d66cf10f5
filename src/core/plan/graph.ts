import { closestMatch, type PlanIssue } from './issues.js';

/** The dependency graph of a plan's steps: reference checks, cycles, transitive dependencies. */

export interface GraphStep {
  id: string;
  dependsOn: readonly string[];
}

/** `pathOf(index, ...fields)` names a step field in messages, e.g. `steps.report.dependsOn[0]`. */
export type StepPathOf = (index: number, ...fields: (string | number)[]) => string;

/** Unknown ids (with the known ones and a suggestion), self-dependencies and repeats. */
export function checkDependsOn(steps: readonly GraphStep[], pathOf: StepPathOf): PlanIssue[] {
  const knownSet = new Set(steps.map((step) => step.id));
  const known = [...knownSet];
  const issues: PlanIssue[] = [];
  steps.forEach((step, index) => {
    const seen = new Set<string>();
    step.dependsOn.forEach((dep, depIndex) => {
      const path = pathOf(index, 'dependsOn', depIndex);
      if (dep === step.id) {
        issues.push({ path, problem: `step "${step.id}" cannot depend on itself: remove "${dep}"` });
      } else if (!knownSet.has(dep)) {
        issues.push({ path, problem: unknownStepProblem(dep, known) });
      } else if (seen.has(dep)) {
        issues.push({ path, problem: `"${dep}" is listed twice: remove one` });
      }
      seen.add(dep);
    });
  });
  return issues;
}

/** `unknown step "analyse" (known: fetch, analyze): did you mean "analyze"?` */
export function unknownStepProblem(id: string, known: readonly string[]): string {
  const shown = known.length > 30 ? [...known.slice(0, 30), '...'] : known;
  const match = closestMatch(id, known);
  const list = `unknown step "${id}" (known: ${shown.join(', ')})`;
  return match === undefined ? list : `${list}: did you mean "${match}"?`;
}

/**
 * Every cycle a depth-first walk finds, each as ids with the first repeated at the end
 * (`[a, b, c, a]`: a depends on b, b on c, c on a), starting from the step that comes first in
 * the plan. Self-dependencies and unknown ids are left to `checkDependsOn`.
 */
export function findCycles(steps: readonly GraphStep[]): string[][] {
  const order = new Map(steps.map((step, index) => [step.id, index]));
  const edges = new Map(
    steps.map((step) => [step.id, step.dependsOn.filter((d) => d !== step.id && order.has(d))]),
  );
  const state = new Map<string, 'active' | 'done'>();
  const cycles: string[][] = [];
  const seenCycles = new Set<string>();

  for (const start of steps) {
    if (state.has(start.id)) continue;
    // An explicit stack instead of recursion, so a long chain of steps cannot overflow the call stack.
    const stack: { id: string; next: number }[] = [{ id: start.id, next: 0 }];
    state.set(start.id, 'active');
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      const dep = edges.get(frame.id)?.[frame.next];
      frame.next += 1;
      if (dep === undefined) {
        state.set(frame.id, 'done');
        stack.pop();
      } else if (state.get(dep) === 'active') {
        const members = stack.slice(stack.findIndex((f) => f.id === dep)).map((f) => f.id);
        const key = [...members].sort().join('\u0000');
        if (!seenCycles.has(key)) {
          seenCycles.add(key);
          cycles.push(rotateToFirst(members, order));
        }
      } else if (!state.has(dep)) {
        state.set(dep, 'active');
        stack.push({ id: dep, next: 0 });
      }
    }
  }
  return cycles;
}

/** For each step id, every step it depends on directly or indirectly (unknown ids ignored). */
export function transitiveDependencies(steps: readonly GraphStep[]): Map<string, Set<string>> {
  const direct = new Map(steps.map((step) => [step.id, step.dependsOn]));
  const result = new Map<string, Set<string>>();
  for (const step of steps) {
    const found = new Set<string>();
    const queue = [...step.dependsOn];
    for (let dep = queue.pop(); dep !== undefined; dep = queue.pop()) {
      if (found.has(dep) || !direct.has(dep)) continue;
      found.add(dep);
      queue.push(...(direct.get(dep) ?? []));
    }
    result.set(step.id, found);
  }
  return result;
}

function rotateToFirst(members: string[], order: Map<string, number>): string[] {
  let first = 0;
  members.forEach((id, index) => {
    if ((order.get(id) ?? 0) < (order.get(members[first]!) ?? 0)) first = index;
  });
  const rotated = [...members.slice(first), ...members.slice(0, first)];
  return [...rotated, rotated[0]!];
}
