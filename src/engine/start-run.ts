import { createHash } from 'node:crypto';
import { BatonError } from '../core/errors.js';
import { checkLabels } from '../core/labels.js';
import { PlanInvalidError } from '../core/plan/issues.js';
import type { AgentSpec, Plan, PlanStep } from '../core/plan/types.js';
import { ulid } from '../core/ulid.js';
import { assertAgentCommand } from '../executors/command-policy.js';
import { planSchemaIssues } from '../executors/result-schema.js';
import { assertSandboxAvailable } from '../executors/sandbox.js';
import { toolApprovalsProblem } from '../executors/tool-approval-check.js';
import { type TrustedPrograms, trustedPrograms } from '../executors/trusted-programs.js';
import type { NewRun, RunDetail, RunSummary, Store } from '../store/store.js';
import { createRunWorkspace, resolveRunWorkspace } from './run-workspace.js';

interface StartRunOptions {
  plan: Plan;
  /** The plan file, when there is one: a relative `workspace` is resolved from its folder. */
  planPath?: string;
  /** Overrides the plan's workspace; relative to the current directory. */
  workspace?: string;
  /**
   * The root, the home folder, or a folder above the one holding `batonHome` are
   * refused as the workspace unless it is this folder (the CLI's `--allow-workspace`).
   */
  allowWorkspace?: string;
  /** The Baton home (the CLI's `--home`), when known: see `allowWorkspace`. */
  batonHome?: string;
  inputs?: Record<string, string>;
  /** Agent for steps whose plan sets none; baked into the stored snapshot so every later `check` uses it. */
  defaultAgent?: AgentSpec;
  runId?: string;
  now?: number;
  /** Store the run as proposed: it starts only when approved. */
  awaitingApproval?: boolean;
  /** Steps already done before the run existed (an imported state.json). */
  completedSteps?: readonly string[];
  /** What the run is for (`-l team=growth`), checked by core/labels.ts. */
  labels?: Readonly<Record<string, string>>;
  /**
   * The programs the operator trusted to receive prompt text (see trusted-programs.ts). Default:
   * BATON_TRUSTED_AGENTS only; the CLI and `new Baton({ home })` add their home's. A function is
   * called only when the plan has a command to check (a plan of functions reads no trust file).
   */
  trust?: TrustedPrograms | (() => TrustedPrograms);
}

/** Resolves inputs against the plan's declarations: unknown names and missing required ones are refused. */
function resolveInputs(plan: Plan, given: Record<string, string>): Record<string, string> {
  const declared = Object.keys(plan.inputs);
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(plan.inputs, name)) {
      throw new BatonError(
        'INPUT_MISSING',
        `input "${name}" is not declared by plan ${plan.name} (declared: ${declared.length > 0 ? declared.join(', ') : 'none'})`,
      );
    }
  }
  const inputs: Record<string, string> = {};
  const missing: string[] = [];
  for (const [name, input] of Object.entries(plan.inputs)) {
    const value = Object.hasOwn(given, name) ? given[name] : input.default;
    if (value === undefined) missing.push(name);
    else inputs[name] = value;
  }
  if (missing.length > 0) {
    throw new BatonError(
      'INPUT_MISSING',
      `plan ${plan.name} needs input ${missing.map((m) => `"${m}"`).join(', ')}: pass --input ${missing[0]}=<value>`,
    );
  }
  return inputs;
}

/** Sha256 of the normalized plan: the identity of the snapshot stored with the run. */
export function planHash(plan: Plan): string {
  return createHash('sha256').update(JSON.stringify(plan)).digest('hex');
}

/**
 * Checks everything that can be checked before anything is stored (inputs, workspace, every agent
 * command against the policy, every result schema, the run id) and returns the run to store. Touches no store, so a
 * caller may validate before it opens (and so creates) a database.
 */
export function prepareRun(options: StartRunOptions): NewRun {
  const now = options.now ?? Date.now();
  const inputs = resolveInputs(options.plan, options.inputs ?? {});
  const workspace = resolveRunWorkspace({
    planWorkspace: options.plan.workspace,
    planPath: options.planPath,
    workspace: options.workspace || undefined,
    allowWorkspace: options.allowWorkspace,
    batonHome: options.batonHome,
  });
  const withDefaultAgent = (step: PlanStep): PlanStep => {
    const withAgent =
      step.kind === 'agent' && !step.agent && options.defaultAgent
        ? { ...step, agent: options.defaultAgent }
        : step;
    const fallback = withAgent.fallback;
    const withFallback =
      fallback?.kind === 'agent' && !fallback.agent && options.defaultAgent
        ? { ...withAgent, fallback: { ...fallback, agent: options.defaultAgent } }
        : withAgent;
    const compensate = withFallback.compensate;
    return compensate?.kind === 'agent' && !compensate.agent && options.defaultAgent
      ? { ...withFallback, compensate: { ...compensate, agent: options.defaultAgent } }
      : withFallback;
  };
  const plan: Plan = {
    ...options.plan,
    steps: options.plan.steps.map(withDefaultAgent),
    ...(options.plan.finally ? { finally: options.plan.finally.map(withDefaultAgent) } : {}),
  };
  // The finally steps are checked as the plan's steps: they run when it ends.
  const checked = plan.finally ? [...plan.steps, ...plan.finally] : plan.steps;
  let trust: TrustedPrograms | undefined;
  const trusted = () => {
    const given = options.trust;
    trust ??= typeof given === 'function' ? given() : (given ?? trustedPrograms(null));
    return trust;
  };
  const source = options.planPath ? `${options.planPath}: ` : '';
  // Plans repeat one command for thousands of steps: each distinct command is checked once.
  const accepted = new Set<string>();
  const ownAgent = new Set(
    [...options.plan.steps, ...(options.plan.finally ?? [])]
      .filter((s) => s.kind === 'agent' && s.agent)
      .map((s) => s.id),
  );
  const checkCommand = (command: readonly string[], field: string) => {
    const key = JSON.stringify(command);
    if (accepted.has(key)) return;
    assertAgentCommand(command, { cwd: workspace, trust: trusted(), where: `${source}${field}` });
    accepted.add(key);
  };
  for (const step of checked) {
    if (step.kind !== 'agent') continue;
    if (!step.agent) {
      throw new BatonError(
        'CONFIG_INVALID',
        `step "${step.id}" has no agent command: set defaults.agent.command in the plan, pass --agent '["claude","-p"]', or set BATON_AGENT_CMD`,
      );
    }
    const field = ownAgent.has(step.id) ? `steps.${step.id}.agent.command` : '--agent or BATON_AGENT_CMD';
    checkCommand(step.agent.command, field);
  }
  for (const step of checked) {
    if (step.fallback?.kind !== 'agent') continue;
    if (!step.fallback.agent) {
      throw new BatonError(
        'CONFIG_INVALID',
        `step "${step.id}" has a fallback instruction but no agent command to run it`,
      );
    }
    checkCommand(step.fallback.agent.command, `steps.${step.id}.fallback.agent.command`);
  }
  // What undoes a step runs as it does: an agent it names is checked now, not when the run ends.
  for (const step of plan.steps) {
    if (step.compensate?.kind !== 'agent') continue;
    if (!step.compensate.agent) {
      throw new BatonError(
        'CONFIG_INVALID',
        `step "${step.id}" has a compensate instruction but no agent command to run it: give compensate.agent, or defaults.agent`,
      );
    }
    checkCommand(step.compensate.agent.command, `steps.${step.id}.compensate.agent.command`);
  }
  // A verification command is run like the agent: a trusted program, no shell.
  for (const step of checked) {
    if (step.verify?.command) checkCommand(step.verify.command, `steps.${step.id}.verify.command`);
    // Tool approvals need a CLI that asks before a tool runs.
    for (const [agent, field] of [
      [step.agent, `steps.${step.id}.agent.approve`],
      [step.fallback?.agent, `steps.${step.id}.fallback.agent.approve`],
    ] as const) {
      const problem = agent
        ? toolApprovalsProblem(agent, step.sandbox === 'workspace', workspace, trusted())
        : null;
      if (problem !== null) throw new BatonError('CONFIG_INVALID', `${source}${field}: ${problem}`);
    }
  }
  // A sub-plan's child plan was read with the plan file: its agents must be trusted now, not when
  // a child starts hours later.
  const checkChildren = (steps: Plan['steps'], where: string): void => {
    for (const step of steps) {
      if (step.kind !== 'plan') continue;
      const child = step.subPlan?.plan;
      if (!child)
        throw new BatonError(
          'CONFIG_INVALID',
          step.subPlan?.path !== undefined
            ? `${source}${where}steps.${step.id}.plan: the child plan ${step.subPlan.path} is read with the plan file: start the run from the file (baton run <file>, loadPlanFile)`
            : `${source}${where}steps.${step.id}.plan: the plan named ${step.subPlan?.name ?? ''} is found when a run starts through baton run, Baton.startPlan or the MCP server (withKnownPlans)`,
        );
      const at = `${where}steps.${step.id}.plan(${child.name}): `;
      for (const childStep of child.steps) {
        if (childStep.agent)
          checkCommand(childStep.agent.command, `${at}steps.${childStep.id}.agent.command`);
        if (childStep.fallback?.agent)
          checkCommand(childStep.fallback.agent.command, `${at}steps.${childStep.id}.fallback.agent.command`);
      }
      checkChildren(child.steps, at);
    }
  };
  checkChildren(plan.steps, '');
  // Confinement asked for where it cannot work is refused, never run unconfined instead.
  assertSandboxAvailable(plan);
  // A result schema ajv cannot compile would fail every attempt: refused as the plan's problem.
  const schemaIssues = planSchemaIssues(plan);
  if (schemaIssues.length > 0)
    throw new PlanInvalidError(options.planPath ?? `plan ${plan.name}`, schemaIssues);
  // Hook commands come from the plan too: the same rules, no shell ever.
  for (const [index, hook] of (plan.hooks ?? []).entries()) {
    if (hook.command) checkCommand(hook.command, `hooks[${index}].command`);
  }
  createRunWorkspace(workspace);
  const runId = options.runId ?? ulid(now, Math.random);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(runId)) {
    throw new BatonError('INVALID_ARGUMENT', `run id "${runId}" must match [A-Za-z0-9_-]{1,64}`);
  }
  return {
    id: runId,
    plan,
    planHash: planHash(plan),
    inputs,
    workspace,
    now,
    ...(options.awaitingApproval ? { awaitingApproval: true } : {}),
    ...(options.completedSteps ? { completedSteps: options.completedSteps } : {}),
    ...(options.labels && Object.keys(options.labels).length > 0
      ? { labels: checkLabels(options.labels, 'labels') }
      : {}),
  };
}

/**
 * Why a stored run is not the run `run` would start (`baton run <plan> --id <id>` again): its plan
 * name, plan (by hash), inputs or workspace differ. Null: the same run, which may be resumed.
 */
export function resumeRefusal(stored: RunDetail, run: NewRun): string | null {
  const differs: string[] = [];
  if (stored.planName !== run.plan.name) {
    differs.push(`its plan is named "${stored.planName}", this one "${run.plan.name}"`);
  } else if (stored.planHash !== run.planHash) {
    differs.push(
      `its plan differs from this one (plan hash ${stored.planHash.slice(0, 12)}, this one ${run.planHash.slice(0, 12)})`,
    );
  }
  const inputNames = [...new Set([...Object.keys(stored.inputs), ...Object.keys(run.inputs)])].sort();
  const changed = inputNames.filter((name) => stored.inputs[name] !== run.inputs[name]);
  if (changed.length > 0) differs.push(`its inputs differ (${changed.join(', ')})`);
  if (stored.workspace !== run.workspace)
    differs.push(`its workspace is ${stored.workspace}, this one ${run.workspace}`);
  if (differs.length === 0) return null;
  return `a run with id "${run.id}" already exists and is not this run: ${differs.join('; ')}; use another --id, or drive that run with: baton check`;
}

/** Validates (see prepareRun) and stores a run. Bad input throws and stores nothing. */
export async function startRun(store: Store, options: StartRunOptions | NewRun): Promise<RunSummary> {
  const run = 'planHash' in options ? options : prepareRun(options);
  if (await store.getRun(run.id))
    throw new BatonError('INVALID_ARGUMENT', `a run with id "${run.id}" already exists`);
  return store.createRun(run);
}
