import { BatonError } from '../core/errors.js';
import type { Plan } from '../core/plan/types.js';
import { prepareRun } from '../engine/start-run.js';
import { agentCommandWarnings } from '../executors/agent-profiles/command-warnings.js';
import { trustedPrograms } from '../executors/trusted-programs.js';
import { resolveHome } from '../runtime/home.js';
import { defaultAgent } from '../runtime/settings.js';
import type { NewRun } from '../store/store.js';
import { loadPlanFile } from '../workflow/load-plan-file.js';
import type { GlobalOptions } from './global-options.js';

interface PrepareOptions extends GlobalOptions {
  input?: string[];
  workspace?: string;
  /** `--allow-workspace <dir>`: this broad folder (root, home, above the Baton home) may be the workspace. */
  allowWorkspace?: string;
  id?: string;
  agent?: string;
  /** A shadow run (`--shadow`). */
  shadow?: boolean;
}

function parseInputs(pairs: readonly string[] = []): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `--input "${pair}": expected name=value, e.g. --input topic="durable execution"`,
      );
    }
    inputs[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return inputs;
}

/** The CLI runs agent steps; function steps need a program that registers the functions. */
function refuseFunctionSteps(plan: Plan, planPath: string): void {
  const fnSteps = plan.steps.filter((step) => step.kind === 'fn' || step.fallback?.kind === 'fn');
  if (fnSteps.length === 0) return;
  const names = fnSteps.map((step) => `${step.id} (fn: ${step.fn ?? step.fallback?.fn})`).join(', ');
  throw new BatonError(
    'CONFIG_INVALID',
    `${planPath}: step(s) ${names} call TypeScript functions, which the baton command cannot run; start this plan from your program with baton.functions.register() and baton.startPlan() (docs/typescript-api.md)`,
  );
}

/**
 * Loads and checks a plan for `run` and `propose`: everything is validated before any database
 * is opened, so bad input creates and changes nothing.
 */
export async function prepareRunFromCli(
  planPath: string,
  options: PrepareOptions,
  extra: { awaitingApproval?: boolean } = {},
): Promise<{ plan: Plan; prepared: NewRun }> {
  const loaded = await loadPlanFile(planPath);
  const plan = options.shadow ? { ...loaded.plan, shadow: true } : loaded.plan;
  refuseFunctionSteps(plan, planPath);
  const agent = defaultAgent(options.agent);
  const prepared = prepareRun({
    plan,
    planPath,
    trust: trustedPrograms(resolveHome(options), process.env),
    inputs: parseInputs(options.input),
    ...(options.workspace ? { workspace: options.workspace } : {}),
    ...(options.allowWorkspace ? { allowWorkspace: options.allowWorkspace } : {}),
    batonHome: resolveHome(options),
    ...(agent ? { defaultAgent: agent } : {}),
    ...(options.id ? { runId: options.id } : {}),
    ...(extra.awaitingApproval ? { awaitingApproval: true } : {}),
  });
  for (const warning of agentCommandWarnings(prepared.plan, prepared.workspace)) {
    process.stderr.write(`baton: warning: ${planPath}: ${warning.where}: ${warning.message}\n`);
  }
  return { plan, prepared };
}
