import type { Verification } from './failure.js';

/**
 * The pure half of a step's verification gate (`verify:`; the I/O is in executors/verify-gate.ts):
 * the criteria a rubric holds, what the grader is asked and how its verdict is read, how the checks
 * of one round of tries are counted, and the words of a failed check.
 */

/** A rubric's criteria: its lines, past blank lines, `#` headings and list markers. */
export const MAX_RUBRIC_CRITERIA = 50;
const MAX_CRITERION_CHARS = 500;

export function rubricCriteria(text: string): string[] {
  const criteria: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const criterion = trimmed.replace(/^(?:[-*+]|\d+[.)])\s+/, '').replace(/^\[[ xX]\]\s+/, '');
    if (criterion !== '') criteria.push(criterion.slice(0, MAX_CRITERION_CHARS));
  }
  return criteria;
}

/** One produced file as the grader sees it (cut to a bounded size). */
export interface GradedFile {
  path: string;
  size: number;
  text: string;
  cut: boolean;
}

/** The grader's prompt: the task, what the agent answered and left, and the numbered criteria. */
export function graderPrompt(input: {
  task: string;
  answer: string;
  value?: unknown;
  files: readonly GradedFile[];
  criteria: readonly string[];
}): string {
  const files = input.files
    .map(
      (file) =>
        `--- ${file.path} (${file.size} bytes${file.cut ? ', cut' : ''}) ---\n${file.text}\n--- end of ${file.path} ---`,
    )
    .join('\n');
  const value =
    input.value === undefined
      ? ''
      : `\nIts structured result (JSON):\n${JSON.stringify(input.value, null, 2)}\n`;
  const criteria = input.criteria.map((criterion, index) => `${index + 1}. ${criterion}`).join('\n');
  return [
    'You are a strict reviewer. Grade the work of an AI agent against each criterion below.',
    'Judge only what is shown; what is missing fails the criterion.',
    '',
    `The task the agent was given:\n${input.task}`,
    '',
    `The agent's final answer:\n${input.answer === '' ? '(none)' : input.answer}`,
    value,
    input.files.length === 0 ? 'It left no files to grade.' : `The files it left:\n${files}`,
    '',
    `Criteria:\n${criteria}`,
    '',
    'Answer with one JSON object and nothing else, one entry per criterion, in order:',
    '{"criteria": [{"id": 1, "passed": true, "reason": "one sentence"}, ...]}',
  ].join('\n');
}

/** The grader's verdict on one criterion. */
export interface CriterionVerdict {
  criterion: string;
  passed: boolean;
  reason: string;
}

/**
 * The verdicts in the grader's answer: the first JSON object in it (a fenced block is fine) with a
 * `criteria` list. A criterion it gave no verdict on fails ("no verdict"): silence never passes.
 * Null when the answer holds no such object.
 */
export function readVerdict(answer: string, criteria: readonly string[]): CriterionVerdict[] | null {
  const parsed = firstJsonObject(answer);
  const list = parsed === null ? null : (parsed as { criteria?: unknown }).criteria;
  if (!Array.isArray(list)) return null;
  const byId = new Map<number, { passed: boolean; reason: string }>();
  list.forEach((entry, index) => {
    if (typeof entry !== 'object' || entry === null) return;
    const { id, passed, reason } = entry as { id?: unknown; passed?: unknown; reason?: unknown };
    const key = typeof id === 'number' && Number.isInteger(id) ? id : index + 1;
    if (byId.has(key)) return;
    byId.set(key, {
      passed: passed === true,
      reason: typeof reason === 'string' ? reason.slice(0, MAX_CRITERION_CHARS) : '',
    });
  });
  return criteria.map((criterion, index) => {
    const verdict = byId.get(index + 1);
    return verdict
      ? { criterion, passed: verdict.passed, reason: verdict.reason }
      : { criterion, passed: false, reason: 'the grader gave no verdict on it' };
  });
}

/** The first parseable `{...}` in a text, or null. */
function firstJsonObject(text: string): unknown {
  for (let start = text.indexOf('{'); start !== -1; start = text.indexOf('{', start + 1)) {
    const end = matchingBrace(text, start);
    if (end === -1) return null;
    try {
      return JSON.parse(text.slice(start, end + 1));
    } catch {
      // Not this brace: try the next one.
    }
  }
  return null;
}

/** The index of the brace closing the one at `start` (strings skipped), or -1. */
function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}

/** What one check recorded (beside the attempt's log), for counting the checks of a round. */
export interface CheckRecord {
  /** When the round's first attempt started (claim.firstStartedAt): a rerun starts a new round. */
  round: number;
  passed: boolean;
  /** This check used up `maxIterations`: a person's retry starts counting again. */
  exhausted: boolean;
  failures: string[];
}

/**
 * Checks failed so far in this round, from the records of the attempts before, newest first: a
 * record of another round, or one that used the iterations up, ends the count; attempts that
 * never got to their check (the agent failed, the worker died) have none and are passed over.
 */
export function failedChecksBefore(records: Iterable<CheckRecord | null>, round: number): number {
  let failed = 0;
  for (const record of records) {
    if (record === null) continue;
    if (endsCount(record, round)) break;
    failed++;
  }
  return failed;
}

/** A record that ends the count of a round's failed checks, going back (see failedChecksBefore). */
export function endsCount(record: CheckRecord, round: number): boolean {
  return record.round !== round || record.exhausted || record.passed;
}

/** The message of a failed check: what a person reads and the next attempt's prompt quotes. */
export function failedCheckMessage(
  iteration: number,
  maxIterations: number,
  failures: readonly string[],
): string {
  const list = failures.join('\n');
  return iteration >= maxIterations
    ? `verification did not pass in ${iteration} of ${maxIterations} checks (verify.maxIterations); last: ${list}`
    : `verification failed (check ${iteration} of ${maxIterations}): ${list}`;
}

/** The verification a stored result carries (`verify:` passed), or undefined. */
export function verificationOf(resultJson: string | null | undefined): Verification | undefined {
  if (typeof resultJson !== 'string' || !resultJson.includes('"verification"')) return undefined;
  try {
    const verification = (JSON.parse(resultJson) as { verification?: Verification }).verification;
    return typeof verification === 'object' && verification !== null ? verification : undefined;
  } catch {
    return undefined;
  }
}

/** How a person reads it: `passed after 2 checks`. */
export function verificationText(verification: Verification): string {
  const checks = `${verification.iterations} check${verification.iterations === 1 ? '' : 's'}`;
  return verification.passed ? `verified: passed after ${checks}` : `verification failed after ${checks}`;
}
