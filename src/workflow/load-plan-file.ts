import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { BatonError } from '../core/errors.js';
import { MAX_PLAN_NESTING, type Plan } from '../core/plan/types.js';
import { checkChildInputs } from '../core/sub-plans.js';
import { parsePlanText } from './parse-plan-text.js';

/** Plan files larger than this are refused (a plan is a few KB; bulk belongs in artifacts). */
export const MAX_PLAN_FILE_BYTES = 5 * 1024 * 1024;

/**
 * Reads and validates a plan file (JSON if the name ends in `.json`, else YAML). Messages name
 * the file as given, or as `shownAs` (the path a caller was given, when it reads another form of it,
 * e.g. its real path). `text` is the file's content, e.g. for hashing the snapshot.
 */
export async function loadPlanFile(
  path: string,
  shownAs = path,
  /** The plan files whose sub-plan this one is, outermost first (see withSubPlans). */
  chain: readonly string[] = [],
): Promise<{ plan: Plan; text: string; absPath: string }> {
  const absPath = resolve(path);
  const info = await stat(absPath).catch((error: unknown) => {
    throw readError(shownAs, error);
  });
  if (info.isDirectory()) {
    throw new BatonError(
      'PLAN_INVALID',
      `${shownAs}: is a directory: give the plan file itself (.yaml, .yml or .json)`,
    );
  }
  if (!info.isFile()) throw new BatonError('PLAN_INVALID', `${shownAs}: is not a regular file`);
  if (info.size > MAX_PLAN_FILE_BYTES) {
    throw new BatonError(
      'PLAN_INVALID',
      `${shownAs}: the file is ${info.size} bytes, more than the 5 MB a plan may have: keep bulky data in files the steps read`,
    );
  }
  const bytes = await readFile(absPath).catch((error: unknown) => {
    throw readError(shownAs, error);
  });
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new BatonError('PLAN_INVALID', `${shownAs}: is not valid UTF-8 text`, { cause: error });
  }
  // The YAML parser is loaded only for a YAML plan (see parse-plan-text.ts).
  const plan = parsePlanText(text, shownAs);
  return { plan: await withSubPlans(plan, absPath, shownAs, chain), text, absPath };
}

/**
 * The plan with the child plan of each sub-plan step (`plan: { path }`) read, validated and kept in
 * it, recursively: a child run runs the plan as it was when its parent's plan was loaded. Refuses a
 * plan that runs itself (directly or through others), nesting deeper than MAX_PLAN_NESTING, and
 * child inputs the child plan does not declare or lacks.
 */
async function withSubPlans(
  plan: Plan,
  absPath: string,
  shownAs: string,
  chain: readonly string[],
): Promise<Plan> {
  if (!plan.steps.some((step) => step.subPlan?.path !== undefined)) return plan;
  const here = [...chain, absPath];
  const steps = [];
  for (const step of plan.steps) {
    // A child named by `name:` is found when the run starts (runtime/known-plans.ts).
    if (step.subPlan?.path === undefined) {
      steps.push(step);
      continue;
    }
    const where = `${shownAs}: steps.${step.id}.plan.path`;
    const childPath = resolve(dirname(absPath), step.subPlan.path);
    if (here.includes(childPath)) {
      const loop = [...here.slice(here.indexOf(childPath)), childPath].map((path) => basename(path));
      throw new BatonError('PLAN_INVALID', `${where}: ${loop.join(' -> ')}: a plan may not run itself`);
    }
    if (here.length >= MAX_PLAN_NESTING) {
      throw new BatonError(
        'PLAN_INVALID',
        `${where}: plans nest deeper than ${MAX_PLAN_NESTING} (${[...here, childPath].map((path) => basename(path)).join(' -> ')})`,
      );
    }
    const child = (await loadPlanFile(childPath, join(dirname(shownAs), step.subPlan.path), here)).plan;
    checkChildInputs(child, step.subPlan.inputs, `${shownAs}: steps.${step.id}.plan.inputs`);
    steps.push({ ...step, subPlan: { ...step.subPlan, plan: child } });
  }
  return { ...plan, steps };
}

function readError(path: string, error: unknown): BatonError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new BatonError('PLAN_NOT_FOUND', `plan file not found: ${path}`, { cause: error });
  }
  const reason = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : String(error);
  return new BatonError('PLAN_INVALID', `${path}: cannot read the plan file: ${reason}`, { cause: error });
}
