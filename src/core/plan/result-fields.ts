import type { PlanIssue } from './issues.js';
import type { PlanFileStep } from './schema.js';
import type { PlanStep } from './types.js';

/**
 * `resultFile` and `resultSchema` of a step as normalized: only agent steps write a result file
 * (a function's result is what it returns, a model step's its answer), a schema checks a file,
 * and the file's path stays in the run workspace, checked here without the disk (the workspace is
 * not known yet; symlinks are resolved when the file is read, executors/result-file.ts). Whether
 * the schema compiles is checked before a run is stored (engine/start-run.ts): the compiler is
 * ajv, which the pure core does not load.
 */
export function normalizeResultFields(
  step: PlanFileStep,
  kind: PlanStep['kind'],
  path: string,
  issues: PlanIssue[],
): Pick<PlanStep, 'resultFile' | 'resultSchema'> {
  const { resultFile, resultSchema } = step;
  if (resultFile === undefined && resultSchema === undefined) return {};
  if (kind !== 'agent') {
    const field = resultFile === undefined ? 'resultSchema' : 'resultFile';
    const why =
      kind === 'fn'
        ? "a function step's result is the value its function returns"
        : "a model step's result is the model's answer";
    issues.push({
      path: `${path}.${field}`,
      problem: `is for agent steps (instruction), and ${why}: remove "${field}"`,
    });
    return {};
  }
  if (resultFile === undefined) {
    issues.push({
      path: `${path}.resultSchema`,
      problem:
        'checks the file named by resultFile, and there is none: add resultFile (e.g. result.json) or remove "resultSchema"',
    });
    return {};
  }
  const problem = workspaceFileProblem(resultFile, 'the result file', 'result.json');
  if (problem !== undefined) issues.push({ path: `${path}.resultFile`, problem });
  return {
    resultFile,
    ...(resultSchema === undefined
      ? {}
      : { resultSchema: structuredClone(resultSchema) as Record<string, unknown> }),
  };
}

/**
 * Why `file` cannot name a file inside the run workspace, or undefined (`what` is the file's role,
 * e.g. "the result file"; `example` a good name for it).
 */
export function workspaceFileProblem(file: string, what: string, example: string): string | undefined {
  const shown = JSON.stringify(file);
  if (file.includes('\u0000')) return `${shown} contains a NUL character`;
  if (file.startsWith('/') || file.startsWith('\\') || /^[A-Za-z]:/.test(file)) {
    return `${shown} is absolute, and ${what} must be inside the run workspace: use a path relative to it, e.g. ${example}`;
  }
  const parts = file.split(/[\\/]/);
  if (parts.includes('..')) {
    return `${shown} leaves the run workspace through "..": use a path inside it, e.g. ${example}`;
  }
  if (parts.every((part) => part === '' || part === '.')) {
    return `${shown} is the run workspace itself: name a file in it, e.g. ${example}`;
  }
  return undefined;
}
