import { BatonError } from '../../core/errors.js';
import type { Plan } from '../../core/plan/types.js';
import { DEFAULT_PRIORITY_AGING_MS, isPriority } from '../../core/priority.js';
import {
  prepareRun as prepareNewRun,
  resumeRefusal,
  startRun as storeNewRun,
} from '../../engine/start-run.js';
import { agentCommandWarnings } from '../../executors/agent-profiles/command-warnings.js';
import { trustedPrograms } from '../../executors/trusted-programs.js';
import { type NewRun, NO_STEPS, type RunSummary } from '../../store/store.js';
import { defaultAgent, priorityAging } from '../settings.js';
import type { CommandContext } from './context.js';

/**
 * Starting a run, the same for every front door (`baton run` and `propose`, `Baton.start`,
 * `startPlan` and `startMany`, the MCP server's `propose` and `run`, a schedule's snapshot): one
 * `prepareRun` with one set of rules, then `startRuns` stores what it prepared.
 *
 * The rules: every check of engine/start-run.ts (inputs, workspace, each agent and hook command
 * against the operator's trust (the home's and BATON_TRUSTED_AGENTS: a plan trusts nothing),
 * the sandbox, every schema) before anything is stored; a step's `fn` must name a function the
 * starting process can run (the CLI, the console and the MCP server have none); steps whose plan
 * sets no agent take `agent` (`--agent`), else BATON_AGENT_CMD; the workspace is `workspace`, else
 * the plan's own (relative to its file's folder, else to the current folder), else its file's folder,
 * else `planFolder` (what a door without files takes for the plan's folder: the MCP server's
 * project), else (a plan built in code) the Baton home: a program's current folder is its project,
 * node_modules and all, which a fork would copy.
 */

/** What a door knows when it prepares a run: no store is needed (a CLI command opens none for bad input). */
export interface StartingProcess {
  home: string;
  env?: NodeJS.ProcessEnv;
  /** The functions this process can run (`fn` steps); none: the `baton` command and its servers. */
  functions?: readonly string[];
}

/** One run to start. */
export interface RunRequest {
  plan: Plan;
  /** The file the plan came from: named in messages; a relative workspace is resolved from its folder. */
  planPath?: string;
  /** For a plan without a file: the folder it belongs to (the MCP server's project), its default workspace. */
  planFolder?: string;
  /** The run's inputs, or a function giving them (called after the plan's own checks). */
  inputs?: Record<string, string> | (() => Record<string, string>);
  /** The run's id; a run of that id that is this run is taken as it is (see startRuns). */
  runId?: string;
  workspace?: string;
  /** This broad folder (root, home, above the Baton home) may be the workspace. */
  allowWorkspace?: string;
  /** The agent of steps whose plan sets none, as given (`--agent`); default BATON_AGENT_CMD. */
  agent?: string;
  shadow?: boolean;
  /** Stored as proposed: it starts when a person approves it. */
  awaitingApproval?: boolean;
  /** Steps stored as done already (`baton import` of a skill state file). */
  completedSteps?: readonly string[];
  /** What the run is for (`-l team=growth`). */
  labels?: Readonly<Record<string, string>>;
  /** The run's claim priority, 0 to 9 (`--priority`); default: the plan's, else 0. */
  priority?: number;
}

/** A run prepared for the store, with what its agent commands lack for Baton to read their output. */
export interface PreparedRun {
  plan: Plan;
  run: NewRun;
  /** Whether the request named the run's id (else it is new, and no stored run can have it). */
  idGiven: boolean;
  warnings: ReturnType<typeof agentCommandWarnings>;
}

/** Checks a run before anything is stored, as every door does (see above). Throws a BatonError. */
export function prepareRun(starting: StartingProcess, request: RunRequest): PreparedRun {
  const env = starting.env ?? process.env;
  const plan = withRunPriority(
    request.shadow ? { ...request.plan, shadow: true } : request.plan,
    request.priority,
    priorityAging(env),
  );
  refuseUnknownFunctions(plan, starting.functions ?? [], request.planPath);
  const agent = defaultAgent(request.agent, env);
  const workspace =
    request.workspace ?? (request.planPath ? undefined : fileLessWorkspace(plan, request, starting));
  const run = prepareNewRun({
    plan,
    ...(request.planPath === undefined ? {} : { planPath: request.planPath }),
    trust: () => trustedPrograms(starting.home, env),
    inputs: typeof request.inputs === 'function' ? request.inputs() : (request.inputs ?? {}),
    ...(workspace ? { workspace } : {}),
    ...(request.allowWorkspace ? { allowWorkspace: request.allowWorkspace } : {}),
    batonHome: starting.home,
    ...(agent ? { defaultAgent: agent } : {}),
    ...(request.runId ? { runId: request.runId } : {}),
    ...(request.awaitingApproval ? { awaitingApproval: true } : {}),
    ...(request.completedSteps ? { completedSteps: request.completedSteps } : {}),
    ...(request.labels ? { labels: request.labels } : {}),
  });
  return {
    plan,
    run,
    idGiven: request.runId !== undefined,
    warnings: agentCommandWarnings(run.plan, run.workspace),
  };
}

/**
 * The plan snapshot of a run with its priority (`--priority` over the plan's) and, when it matters
 * and is not the default, BATON_PRIORITY_AGING as it is now (core/priority.ts).
 */
function withRunPriority(plan: Plan, priority: number | undefined, agingMs: number): Plan {
  if (priority !== undefined && !isPriority(priority))
    throw new BatonError(
      'INVALID_ARGUMENT',
      `priority: expected a whole number from 0 (default) to 9 (first), got ${JSON.stringify(priority)}`,
    );
  const runPriority = priority ?? plan.priority ?? 0;
  const { priority: _priority, priorityAgingMs: _aging, ...rest } = plan;
  const prioritized = runPriority > 0 || plan.steps.some((step) => (step.priority ?? 0) > 0);
  if (!prioritized && plan.priority === undefined && plan.priorityAgingMs === undefined) return plan;
  return {
    ...rest,
    ...(runPriority > 0 ? { priority: runPriority } : {}),
    ...(prioritized && agingMs !== DEFAULT_PRIORITY_AGING_MS ? { priorityAgingMs: agingMs } : {}),
  };
}

/** A started run: its summary (masked) and whether this call stored it. */
export interface StartedRun {
  run: RunSummary;
  created: boolean;
}

/**
 * Stores prepared runs, idempotently by id: a run of that id that is the same run (plan, inputs
 * and workspace) is answered as it is (`created: false`), one that differs is refused naming what
 * differs, before anything is stored. Stored at once: the SQLite store commits them together.
 */
export async function startRuns(
  ctx: CommandContext,
  prepared: readonly Pick<PreparedRun, 'run' | 'idGiven'>[],
): Promise<StartedRun[]> {
  const existing = await Promise.all(
    prepared.map(({ run, idGiven }) => (idGiven ? existingRun(ctx, run) : null)),
  );
  const started = await Promise.all(
    prepared.map(async ({ run }, index): Promise<StartedRun> => {
      const found = existing[index];
      if (found) return { run: found, created: false };
      try {
        return { run: await storeNewRun(ctx.store, run), created: true };
      } catch (error) {
        // Another process (or another item of the same call) stored the same id first.
        const raced = await existingRun(ctx, run);
        if (raced) return { run: raced, created: false };
        throw error;
      }
    }),
  );
  if (started.some((run) => run.created)) ctx.nudge();
  return started;
}

/** One run: see startRuns. */
export async function startRun(
  ctx: CommandContext,
  prepared: Pick<PreparedRun, 'run' | 'idGiven'>,
): Promise<StartedRun> {
  return (await startRuns(ctx, [prepared]))[0]!;
}

async function existingRun(ctx: CommandContext, run: NewRun): Promise<RunSummary | null> {
  // Compared as stored (a masked input would differ from the one given), answered masked.
  const stored = await ctx.unmasked.getRun(run.id);
  if (!stored) return null;
  const refusal = resumeRefusal(stored, run);
  if (refusal) throw new BatonError('INVALID_ARGUMENT', refusal);
  return (await ctx.store.getRunSteps(run.id, NO_STEPS)) ?? stored;
}

/**
 * The default workspace of a plan without a file: `planFolder`, else the home; undefined when the
 * plan names its own (resolved from the current folder, checked as every workspace is).
 */
function fileLessWorkspace(plan: Plan, request: RunRequest, starting: StartingProcess): string | undefined {
  if (plan.workspace !== undefined) return undefined;
  return request.planFolder ?? starting.home;
}

function refuseUnknownFunctions(plan: Plan, functions: readonly string[], planPath?: string): void {
  const known = new Set(functions);
  const missing: string[] = [];
  for (const step of plan.steps) {
    for (const name of [step.fn, step.fallback?.fn]) {
      if (name !== undefined && !known.has(name)) missing.push(`${step.id} (fn: ${name})`);
    }
  }
  if (missing.length === 0) return;
  const where = planPath ?? `plan ${plan.name}`;
  throw new BatonError(
    'CONFIG_INVALID',
    functions.length === 0
      ? `${where}: step(s) ${missing.join(', ')} call TypeScript functions, which the baton command cannot run; start this plan from your program with baton.functions.register() and baton.startPlan() (docs/typescript-api.md)`
      : `${where}: step(s) ${missing.join(', ')} call a function this Baton has not registered: baton.functions.register(name, fn) before starting the run (registered: ${functions.join(', ')})`,
  );
}
