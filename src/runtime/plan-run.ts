import { BatonError } from '../core/errors.js';
import type { Plan } from '../core/plan/types.js';
import { prepareRun } from '../engine/start-run.js';
import { agentCommandWarnings } from '../executors/agent-profiles/command-warnings.js';
import { trustedPrograms } from '../executors/trusted-programs.js';
import type { NewRun } from '../store/store.js';
import { defaultAgent } from './settings.js';

/**
 * A run of a loaded plan prepared for the store, as `baton run` and `baton propose` prepare it
 * (superseded by commands/start-commands.ts): every check `prepareRun` makes
 * (inputs, workspace, each agent and hook command against the operator's trust, result schemas)
 * before anything is stored. The trust is the Baton home's and BATON_TRUSTED_AGENTS: a plan can
 * trust nothing, whoever hands it in.
 */

export interface PlanRunOptions {
  /** The Baton home: its trusted programs, and the folder a workspace may not contain. */
  home: string;
  env?: NodeJS.ProcessEnv;
  /** The run's inputs, or a function giving them (called after the plan's own checks). */
  inputs?: Record<string, string> | (() => Record<string, string>);
  workspace?: string;
  /** This broad folder (root, home, above the Baton home) may be the workspace. */
  allowWorkspace?: string;
  runId?: string;
  /** The agent of steps whose plan sets none, as given (`--agent`); else BATON_AGENT_CMD. */
  agent?: string;
  shadow?: boolean;
  awaitingApproval?: boolean;
}

/** A front door without a program of functions refuses steps that call TypeScript functions. */
function refuseFunctionSteps(plan: Plan, where: string): void {
  const fnSteps = plan.steps.filter((step) => step.kind === 'fn' || step.fallback?.kind === 'fn');
  if (fnSteps.length === 0) return;
  const names = fnSteps.map((step) => `${step.id} (fn: ${step.fn ?? step.fallback?.fn})`).join(', ');
  throw new BatonError(
    'CONFIG_INVALID',
    `${where}: step(s) ${names} call TypeScript functions, which the baton command cannot run; start this plan from your program with baton.functions.register() and baton.startPlan() (docs/typescript-api.md)`,
  );
}

/**
 * Checks a loaded plan for a run and returns the run to store, with what its agent commands lack
 * for Baton to read their output (warnings, not refusals). Stores nothing.
 */
export function preparePlanRun(
  loaded: { plan: Plan; planPath?: string },
  options: PlanRunOptions,
): { plan: Plan; prepared: NewRun; warnings: ReturnType<typeof agentCommandWarnings> } {
  const env = options.env ?? process.env;
  const plan = options.shadow ? { ...loaded.plan, shadow: true } : loaded.plan;
  refuseFunctionSteps(plan, loaded.planPath ?? `plan ${plan.name}`);
  const agent = defaultAgent(options.agent, env);
  const prepared = prepareRun({
    plan,
    ...(loaded.planPath === undefined ? {} : { planPath: loaded.planPath }),
    trust: trustedPrograms(options.home, env),
    inputs: typeof options.inputs === 'function' ? options.inputs() : (options.inputs ?? {}),
    ...(options.workspace ? { workspace: options.workspace } : {}),
    ...(options.allowWorkspace ? { allowWorkspace: options.allowWorkspace } : {}),
    batonHome: options.home,
    ...(agent ? { defaultAgent: agent } : {}),
    ...(options.runId ? { runId: options.runId } : {}),
    ...(options.awaitingApproval ? { awaitingApproval: true } : {}),
  });
  return { plan, prepared, warnings: agentCommandWarnings(prepared.plan, prepared.workspace) };
}
