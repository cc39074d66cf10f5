import type { PlanIssue } from '../core/plan/issues.js';
import type { Plan } from '../core/plan/types.js';
import { resolveRunWorkspace } from '../engine/run-workspace.js';
import { checkAgentCommand } from '../executors/command-policy.js';
import { planSchemaIssues } from '../executors/result-schema.js';
import { toolApprovalsProblem } from '../executors/tool-approval-check.js';
import { trustedPrograms } from '../executors/trusted-programs.js';
import type { StartingProcess } from './commands/start-commands.js';
import { defaultAgent } from './settings.js';

/**
 * Every problem of a loaded plan that `prepareRun` (commands/start-commands.ts) would refuse, as
 * data with its path, without storing or creating anything (the MCP server's `validate_plan`):
 * steps calling functions the starting process cannot run, agent and hook commands the policy and
 * the operator's trust refuse, result schemas that do not compile, a workspace that may not be one.
 * The plan's own problems come from parsing it.
 */
export function planRunProblems(
  starting: StartingProcess,
  loaded: { plan: Plan; planPath?: string },
  options: { workspace?: string; agent?: string } = {},
): PlanIssue[] {
  const env = starting.env ?? process.env;
  const { plan } = loaded;
  const issues: PlanIssue[] = [];
  let workspace: string;
  try {
    workspace = resolveRunWorkspace({
      planWorkspace: plan.workspace,
      planPath: loaded.planPath,
      workspace: options.workspace || undefined,
      batonHome: starting.home,
    });
  } catch (error) {
    issues.push({ path: 'workspace', problem: (error as Error).message });
    workspace = process.cwd();
  }
  issues.push(...functionIssues(plan, starting.functions ?? []));
  const trust = trustedPrograms(starting.home, env);
  const agent = defaultAgent(options.agent, env);
  const checked = new Set<string>();
  const check = (command: readonly string[], path: string) => {
    const key = JSON.stringify(command);
    if (checked.has(key)) return;
    checked.add(key);
    const verdict = checkAgentCommand(command, { cwd: workspace, trust });
    if (!verdict.ok) issues.push({ path, problem: `command ${key} refused: ${verdict.reason}` });
  };
  for (const step of plan.steps) {
    for (const [spec, path] of [
      [step.kind === 'agent' ? (step.agent ?? agent ?? null) : undefined, `steps.${step.id}.agent.command`],
      [
        step.fallback?.kind === 'agent' ? (step.fallback.agent ?? agent ?? null) : undefined,
        `steps.${step.id}.fallback.agent.command`,
      ],
    ] as const) {
      if (spec === undefined) continue;
      if (spec === null)
        issues.push({
          path,
          problem: 'no agent command: set defaults.agent.command in the plan (or BATON_AGENT_CMD)',
        });
      else check(spec.command, path);
    }
    if (step.verify?.command) check(step.verify.command, `steps.${step.id}.verify.command`);
    const ownAgent = step.kind === 'agent' ? (step.agent ?? agent) : undefined;
    const approvals = ownAgent
      ? toolApprovalsProblem(ownAgent, step.sandbox === 'workspace', workspace, trust)
      : null;
    if (approvals !== null)
      issues.push({
        path: `steps.${step.id}.agent.approve`,
        problem: approvals.replace(/^agent\.approve: /, ''),
      });
  }
  for (const [index, hook] of (plan.hooks ?? []).entries())
    if (hook.command) check(hook.command, `hooks[${index}].command`);
  issues.push(...planSchemaIssues(plan));
  return issues;
}

/** The steps whose function (or fallback's) the starting process cannot run, once per step. */
function functionIssues(plan: Plan, functions: readonly string[]): PlanIssue[] {
  const known = new Set(functions);
  return plan.steps
    .filter((step) => [step.fn, step.fallback?.fn].some((name) => name !== undefined && !known.has(name)))
    .map((step) => ({
      path: `steps.${step.id}.fn`,
      problem:
        functions.length === 0
          ? 'calls a TypeScript function, which only a program with baton.functions.register() can run'
          : `calls a function this Baton has not registered (registered: ${functions.join(', ')})`,
    }));
}
