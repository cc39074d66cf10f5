import { BatonError } from '../errors.js';
import { RESERVED_NAMES, STEP_ID_PATTERN } from './types.js';

/** One problem found in a plan. */
export interface PlanIssue {
  /** Field path such as `steps.fetch.dependsOn[0]`; `''` for the plan as a whole. */
  path: string;
  /** What is wrong and, where there is one, the fix. */
  problem: string;
  /** 1-based position in the text, for syntax errors. */
  line?: number;
  column?: number;
}

/** A `PLAN_INVALID` BatonError that also carries every issue found, as data. */
export class PlanInvalidError extends BatonError {
  readonly fileName: string;
  readonly issues: readonly PlanIssue[];
  /**
   * The text parsed to a plan document (a mapping with `steps`, see isPlanDocument): its problems
   * are a plan's, and may quote its values. False for text that did not parse or is something
   * else (a `.env`, a key): a door that must not show such a file's content words it without it.
   */
  readonly planDocument: boolean;

  constructor(
    fileName: string,
    issues: readonly PlanIssue[],
    options?: { cause?: unknown; planDocument?: boolean },
  ) {
    super('PLAN_INVALID', formatPlanIssues(fileName, issues), options);
    this.fileName = fileName;
    this.issues = issues;
    this.planDocument = options?.planDocument === true;
  }
}

/** Whether a parsed value is meant as a plan: a mapping with `steps` (whatever their shape). */
export function isPlanDocument(value: unknown): boolean {
  return isRecord(value) && Object.hasOwn(value, 'steps');
}

/** A message names at most this many problems (all of them stay in `PlanInvalidError.issues`). */
const MAX_ISSUES_SHOWN = 20;

/**
 * One line per issue, `<file>: <path>: <problem>` (or `<file>:<line>:<col>: <problem>`),
 * preceded by a `<file>: N problems` summary line when there are several; past
 * MAX_ISSUES_SHOWN, a last line says how many more there are.
 */
function formatPlanIssues(fileName: string, issues: readonly PlanIssue[]): string {
  if (issues.length === 1) return formatPlanIssue(fileName, issues[0]!);
  const lines = issues.slice(0, MAX_ISSUES_SHOWN).map((issue) => formatPlanIssue(fileName, issue));
  const more = issues.length - lines.length;
  if (more > 0) lines.push(`${fileName}: ... and ${more} more (fix these first)`);
  return [`${fileName}: ${issues.length} problems`, ...lines].join('\n');
}

function formatPlanIssue(fileName: string, issue: PlanIssue): string {
  if (issue.line !== undefined) return `${fileName}:${issue.line}:${issue.column ?? 1}: ${issue.problem}`;
  return issue.path === '' ? `${fileName}: ${issue.problem}` : `${fileName}: ${issue.path}: ${issue.problem}`;
}

const PLAIN_KEY = /^[A-Za-z0-9_$-]+$/;

/**
 * Names the steps of a raw (not yet validated) plan for error paths: the step's id when it is a
 * valid id used by no other step, else undefined (the path then uses the index, `steps[2]`).
 */
export function stepPathNames(raw: unknown): (string | undefined)[] {
  const steps = isRecord(raw) && Array.isArray(raw.steps) ? (raw.steps as unknown[]) : [];
  const ids = steps.map((step) => (isRecord(step) && typeof step.id === 'string' ? step.id : undefined));
  const uses = new Map<string, number>();
  for (const id of ids) if (id !== undefined) uses.set(id, (uses.get(id) ?? 0) + 1);
  return ids.map((id) =>
    id !== undefined && STEP_ID_PATTERN.test(id) && !RESERVED_NAMES.has(id) && uses.get(id) === 1
      ? id
      : undefined,
  );
}

/** `['steps', 2, 'dependsOn', 0]` -> `steps.report.dependsOn[0]` (or `steps[2].dependsOn[0]`). */
export function formatIssuePath(
  path: readonly PropertyKey[],
  stepNames: readonly (string | undefined)[] = [],
  finallyNames: readonly (string | undefined)[] = [],
): string {
  const names = path[0] === 'steps' ? stepNames : path[0] === 'finally' ? finallyNames : [];
  let text = '';
  path.forEach((segment, index) => {
    if (typeof segment === 'number') {
      const stepName = index === 1 ? names[segment] : undefined;
      text += stepName === undefined ? `[${segment}]` : `.${stepName}`;
    } else {
      const key = String(segment);
      text += PLAIN_KEY.test(key) ? `${index === 0 ? '' : '.'}${key}` : `[${JSON.stringify(key)}]`;
    }
  });
  return text;
}

/**
 * The candidate closest to `word` if it is close enough to be a likely typo (edit distance,
 * ignoring case, `_` and `-`), or one that starts with it (`timeout` -> `timeoutMs`).
 */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  const target = simplify(word);
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  let prefixMatch: string | undefined;
  for (const candidate of candidates) {
    const simple = simplify(candidate);
    const limit = Math.max(1, Math.floor(Math.max(target.length, simple.length) / 3));
    // The distance is at least the difference in length: most candidates need no matrix.
    // Only a distance within the limit and below the best so far matters: past it, stop counting.
    const bound = Math.min(limit, bestDistance - 1);
    const distance =
      Math.abs(target.length - simple.length) > bound
        ? Number.POSITIVE_INFINITY
        : editDistance(target, simple, bound);
    if (distance <= limit && distance < Math.min(target.length, simple.length) && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
    if (prefixMatch === undefined && target.length >= 4 && simple.startsWith(target)) prefixMatch = candidate;
  }
  return best ?? prefixMatch;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function simplify(word: string): string {
  return word.toLowerCase().replace(/[-_]/g, '');
}

/**
 * The edit distance of `a` and `b`, or infinity once it is sure to exceed `bound` (every cell of
 * a row above it: the distance never goes below a row's minimum), so comparing a word with
 * 10,000 candidates stops early for most of them.
 */
function editDistance(a: string, b: string, bound = Number.POSITIVE_INFINITY): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
      rowMin = Math.min(rowMin, current[j]!);
    }
    if (rowMin > bound) return Number.POSITIVE_INFINITY;
    previous = current;
  }
  return previous[b.length] ?? 0;
}
