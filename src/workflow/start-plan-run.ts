import { BatonError } from '../core/errors.js';
import type { Plan } from '../core/plan/types.js';
import { prepareRun, startRun } from '../engine/start-run.js';
import { trustedPrograms } from '../executors/trusted-programs.js';
import { type NewRun, NO_STEPS, type Store } from '../store/store.js';

/** How `baton.startPlan` (and `baton.start`, which goes through it) starts a run. */
export interface StartPlanOptions {
  /**
   * The run's id (`[A-Za-z0-9_-]{1,64}`). A run with this id that exists (of a plan with the same
   * name) is returned as it is (`created: false`) and nothing else happens. Default a new ULID.
   */
  runId?: string;
  /**
   * A shadow run: steps with a `sideEffect` are not executed (their rendered inputs are recorded
   * as `step.would_execute`), and `ctx.effect` performs nothing.
   */
  shadow?: boolean;
  /**
   * The run's workspace, where agents work; relative to the current directory. Default: the plan's
   * own `workspace` (relative to the folder of `planPath`, else the current directory), else the
   * Baton home.
   */
  workspace?: string;
  /**
   * The plan file the plan came from (`loadPlanFile(path).absPath`): a relative `workspace` of the
   * plan is resolved from its folder, and messages name it.
   */
  planPath?: string;
  /**
   * The root, your home folder and the folders above the Baton home are refused as the workspace
   * unless it is this folder (the CLI's `--allow-workspace`).
   */
  allowWorkspace?: string;
}

/** What the starting process offers the run: its home, and the functions its workers can run. */
export interface StartingBaton {
  home: string;
  /** Names registered for `fn: <name>` steps (`FunctionRegistry.names()`). */
  functions: readonly string[];
}

/**
 * Starts a run of `plan` from the TypeScript API, idempotently by run id: a run that exists is
 * returned (`created: false`). A plan whose `fn` steps (or fallbacks) name a function this process
 * has not registered is refused before anything is stored: its workers could never run them.
 */
export async function startPlanRun(
  store: Store,
  baton: StartingBaton,
  plan: Plan,
  inputs: Record<string, string>,
  options: StartPlanOptions,
): Promise<{ runId: string; created: boolean }> {
  const planned = await planStart(store, baton, plan, inputs, options);
  return 'existing' in planned ? planned.existing : storeStart(store, plan, options, planned.run);
}

/**
 * Starts one run of `plan` per item, as startPlanRun does each, but checks every one before it
 * stores any: an item that cannot be started (a missing input, a bad run id) rejects the call and
 * none of them is stored. The runs are stored at once (the SQLite store commits them together).
 */
export async function startPlanRuns(
  store: Store,
  baton: StartingBaton,
  plan: Plan,
  items: readonly { inputs: Record<string, string>; options: StartPlanOptions }[],
): Promise<{ runId: string; created: boolean }[]> {
  const planned = await Promise.all(
    items.map(({ inputs, options }) => planStart(store, baton, plan, inputs, options)),
  );
  return Promise.all(
    planned.map((start, index) =>
      'existing' in start ? start.existing : storeStart(store, plan, items[index]!.options, start.run),
    ),
  );
}

/** What starting a run comes to, decided before anything is stored: the run its id names, or the run to store. */
type PlannedStart = { existing: { runId: string; created: false } } | { run: NewRun };

async function planStart(
  store: Store,
  baton: StartingBaton,
  plan: Plan,
  inputs: Record<string, string>,
  options: StartPlanOptions,
): Promise<PlannedStart> {
  refuseUnregisteredFunctions(plan, baton.functions);
  if (options.runId !== undefined) {
    const existing = await existingRun(store, plan, options.runId);
    if (existing) return { existing };
  }
  return { run: prepareApiRun(baton, plan, inputs, options) };
}

/**
 * A run of `plan` as the API stores it, checked (inputs, workspace, commands) but not stored: the
 * workspace defaults to the plan's own, else the Baton home. `baton.schedule` stores it as the
 * schedule's snapshot.
 */
export function prepareApiRun(
  baton: StartingBaton,
  plan: Plan,
  inputs: Record<string, string>,
  options: StartPlanOptions,
): NewRun {
  refuseUnregisteredFunctions(plan, baton.functions);
  const workspace = options.workspace ?? (plan.workspace === undefined ? baton.home : undefined);
  return prepareRun({
    plan: options.shadow ? { ...plan, shadow: true } : plan,
    inputs,
    batonHome: baton.home,
    trust: () => trustedPrograms(baton.home, process.env),
    ...(workspace === undefined ? {} : { workspace }),
    ...(options.planPath === undefined ? {} : { planPath: options.planPath }),
    ...(options.allowWorkspace === undefined ? {} : { allowWorkspace: options.allowWorkspace }),
    ...(options.runId === undefined ? {} : { runId: options.runId }),
  });
}

async function storeStart(
  store: Store,
  plan: Plan,
  options: StartPlanOptions,
  run: NewRun,
): Promise<{ runId: string; created: boolean }> {
  try {
    const stored = await startRun(store, run);
    return { runId: stored.id, created: true };
  } catch (error) {
    // Another process (or another item of the same call) started the same run id first.
    const existing = options.runId === undefined ? null : await existingRun(store, plan, options.runId);
    if (existing) return existing;
    throw error;
  }
}

async function existingRun(
  store: Store,
  plan: Plan,
  runId: string,
): Promise<{ runId: string; created: false } | null> {
  // Its summary only: the run may have 10,000 steps.
  const run = await store.getRunSteps(runId, NO_STEPS);
  if (!run) return null;
  if (run.planName !== plan.name) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `run id "${runId}" is already a run of ${run.planName}, not of ${plan.name}`,
    );
  }
  return { runId, created: false };
}

function refuseUnregisteredFunctions(plan: Plan, registered: readonly string[]): void {
  const known = new Set(registered);
  const missing: string[] = [];
  const check = (stepId: string, name: string | undefined) => {
    if (name !== undefined && !known.has(name)) missing.push(`${stepId} (fn: ${name})`);
  };
  for (const step of plan.steps) {
    check(step.id, step.fn);
    check(step.id, step.fallback?.fn);
  }
  if (missing.length === 0) return;
  throw new BatonError(
    'CONFIG_INVALID',
    `plan ${plan.name}: step(s) ${missing.join(', ')} call a function this Baton has not registered: ` +
      `baton.functions.register(name, fn) before starting the run (registered: ${registered.length > 0 ? registered.join(', ') : 'none'})`,
  );
}
