import { closestMatch, type PlanIssue } from './issues.js';

/** The dependency graph of a plan's steps: reference checks, cycles, transitive dependencies. */

export interface GraphStep {
  id: string;
  dependsOn: readonly string[];
}

/** `pathOf(index, ...fields)` names a step field in messages, e.g. `steps.report.dependsOn[0]`. */
export type StepPathOf = (index: number, ...fields: (string | number)[]) => string;

/**
 * How many "did you mean" suggestions one validation computes: each compares a word with every
 * candidate, so a plan with thousands of bad references would otherwise cost quadratic time.
 * Messages after the budget is spent list the known ids without a suggestion.
 */
export class SuggestionBudget {
  constructor(private left = 20) {}

  take(): boolean {
    this.left -= 1;
    return this.left >= 0;
  }
}

/** Unknown ids (with the known ones and a suggestion), self-dependencies and repeats. */
export function checkDependsOn(
  steps: readonly GraphStep[],
  pathOf: StepPathOf,
  budget = new SuggestionBudget(),
): PlanIssue[] {
  const knownSet = new Set(steps.map((step) => step.id));
  const known = [...knownSet];
  const issues: PlanIssue[] = [];
  steps.forEach((step, index) => {
    const seen = new Set<string>();
    step.dependsOn.forEach((dep, depIndex) => {
      // The path is formatted only for a problem: a valid 10,000-step plan has none to name.
      const path = () => pathOf(index, 'dependsOn', depIndex);
      if (dep === step.id) {
        issues.push({ path: path(), problem: `step "${step.id}" cannot depend on itself: remove "${dep}"` });
      } else if (!knownSet.has(dep)) {
        issues.push({ path: path(), problem: unknownStepProblem(dep, known, budget.take()) });
      } else if (seen.has(dep)) {
        issues.push({ path: path(), problem: `"${dep}" is listed twice: remove one` });
      }
      seen.add(dep);
    });
  });
  return issues;
}

/** `unknown step "analyse" (known: fetch, analyze): did you mean "analyze"?` */
export function unknownStepProblem(id: string, known: readonly string[], suggest = true): string {
  const shown = known.length > 30 ? [...known.slice(0, 30), '...'] : known;
  const match = suggest ? closestMatch(id, known) : undefined;
  const list = `unknown step "${id}" (known: ${shown.join(', ')})`;
  return match === undefined ? list : `${list}: did you mean "${match}"?`;
}

/**
 * One cycle per group of steps that depend on each other (a strongly connected component), as
 * ids with the first repeated at the end (`[a, b, c, a]`: a depends on b, b on c, c on a),
 * starting from the step that comes first in the plan; groups in plan order. Linear in the size
 * of the graph and free of recursion (Tarjan's algorithm with an explicit stack), so a chain of
 * 100,000 steps neither overflows the stack nor takes quadratic time. Self-dependencies and
 * unknown ids are left to `checkDependsOn`.
 */
export function findCycles(steps: readonly GraphStep[]): string[][] {
  const deps = dependencyIndexes(steps);
  const component = stronglyConnectedComponents(deps);
  const cycles: { first: number; ids: string[] }[] = [];
  const sizes = new Map<number, number>();
  for (const c of component) sizes.set(c, (sizes.get(c) ?? 0) + 1);
  const walked = new Set<number>();
  for (let start = 0; start < steps.length; start++) {
    const group = component[start]!;
    if ((sizes.get(group) ?? 0) < 2 || walked.has(group)) continue;
    walked.add(group);
    // Inside a group every step depends on another of it: following one such dependency from
    // step to step must come back to a step already passed, which closes a cycle.
    const position = new Map<number, number>();
    const path: number[] = [];
    let at = start;
    while (!position.has(at)) {
      position.set(at, path.length);
      path.push(at);
      at = deps[at]!.find((dep) => component[dep] === group)!;
    }
    const members = path.slice(position.get(at)).map((index) => steps[index]!.id);
    const order = new Map(path.map((index) => [steps[index]!.id, index]));
    cycles.push({ first: start, ids: rotateToFirst(members, order) });
  }
  return cycles.sort((a, b) => a.first - b.first).map((cycle) => cycle.ids);
}

/** For each step (by index), the indexes of the known steps it depends on, itself left out. */
function dependencyIndexes(steps: readonly GraphStep[]): number[][] {
  const index = new Map(steps.map((step, i) => [step.id, i]));
  return steps.map((step) => {
    const list: number[] = [];
    for (const dep of step.dependsOn) {
      const at = index.get(dep);
      if (at !== undefined && dep !== step.id) list.push(at);
    }
    return list;
  });
}

/** Tarjan's algorithm, iterative: the component number of every node. */
function stronglyConnectedComponents(edges: readonly number[][]): Int32Array {
  const n = edges.length;
  const order = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const component = new Int32Array(n).fill(-1);
  const pending: number[] = [];
  let counter = 0;
  let components = 0;
  for (let root = 0; root < n; root++) {
    if (order[root] !== -1) continue;
    const frames: [node: number, next: number][] = [[root, 0]];
    order[root] = low[root] = counter++;
    pending.push(root);
    onStack[root] = 1;
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const [node, next] = frame;
      const targets = edges[node]!;
      if (next < targets.length) {
        frame[1] = next + 1;
        const target = targets[next]!;
        if (order[target] === -1) {
          order[target] = low[target] = counter++;
          pending.push(target);
          onStack[target] = 1;
          frames.push([target, 0]);
        } else if (onStack[target] === 1) {
          low[node] = Math.min(low[node]!, order[target]!);
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent !== undefined) low[parent[0]] = Math.min(low[parent[0]]!, low[node]!);
      if (low[node] === order[node]) {
        for (let member = pending.pop(); member !== undefined; member = pending.pop()) {
          onStack[member] = 0;
          component[member] = components;
          if (member === node) break;
        }
        components += 1;
      }
    }
  }
  return component;
}

/**
 * Answers "does step S depend on step T, directly or indirectly?" for the pairs asked, without
 * building every step's set of ancestors (10,000 steps would make 50 million entries). The steps
 * are taken in dependency order and each carries a bit per asked-about target, ORed from its
 * dependencies: time O((steps + dependencies) x targets / 32), memory bounded by doing the
 * targets 1,024 at a time. Steps on or after a cycle have no order: they are answered `true`,
 * as the cycle is reported anyway.
 */
export function answerDependencyQuestions(
  steps: readonly GraphStep[],
  questions: readonly { step: string; target: string }[],
): boolean[] {
  const index = new Map(steps.map((step, i) => [step.id, i]));
  const deps = dependencyIndexes(steps);
  const order = dependencyOrder(deps);
  const ordered = new Uint8Array(steps.length);
  for (const node of order) ordered[node] = 1;
  const answers = questions.map(() => true);
  const targets = [...new Set(questions.map((question) => question.target))].filter((t) => index.has(t));
  const CHUNK = 1024;
  for (let first = 0; first < targets.length; first += CHUNK) {
    const chunk = targets.slice(first, first + CHUNK);
    const bit = new Map(chunk.map((target, i) => [index.get(target)!, i]));
    const words = Math.ceil(chunk.length / 32);
    const rows = new Uint32Array(steps.length * words);
    for (const node of order) {
      const row = node * words;
      for (const dep of deps[node]!) {
        const depRow = dep * words;
        for (let w = 0; w < words; w++) rows[row + w]! |= rows[depRow + w]!;
        const own = bit.get(dep);
        if (own !== undefined) rows[row + (own >> 5)]! |= 1 << (own & 31);
      }
    }
    const inChunk = new Map(chunk.map((target, i) => [target, i]));
    questions.forEach((question, q) => {
      const b = inChunk.get(question.target);
      const node = index.get(question.step);
      if (b === undefined || node === undefined || ordered[node] === 0) return;
      answers[q] = (rows[node * words + (b >> 5)]! & (1 << (b & 31))) !== 0;
    });
  }
  return answers;
}

/** Kahn's algorithm: the nodes whose dependencies all come before them, in that order. */
function dependencyOrder(deps: readonly number[][]): number[] {
  const waiting = deps.map((list) => list.length);
  const dependents: number[][] = deps.map(() => []);
  deps.forEach((list, node) => {
    for (const dep of list) dependents[dep]!.push(node);
  });
  const order: number[] = [];
  deps.forEach((_, node) => {
    if (waiting[node] === 0) order.push(node);
  });
  for (let i = 0; i < order.length; i++) {
    for (const next of dependents[order[i]!]!) {
      waiting[next]! -= 1;
      if (waiting[next] === 0) order.push(next);
    }
  }
  return order;
}

function rotateToFirst(members: string[], order: Map<string, number>): string[] {
  let first = 0;
  members.forEach((id, index) => {
    if ((order.get(id) ?? 0) < (order.get(members[first]!) ?? 0)) first = index;
  });
  const rotated = [...members.slice(first), ...members.slice(0, first)];
  return [...rotated, rotated[0]!];
}
