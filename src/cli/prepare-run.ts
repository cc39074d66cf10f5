import { BatonError } from '../core/errors.js';
import { parseLabels } from '../core/labels.js';
import type { Plan } from '../core/plan/types.js';
import { type PreparedRun, prepareRun } from '../runtime/commands/start-commands.js';
import { resolveHome } from '../runtime/home.js';
import { homePlans, namesUnknownPlans, withKnownPlans } from '../runtime/known-plans.js';
import { openStore, storeExists } from '../runtime/open-store.js';
import { parsePriority } from '../runtime/settings.js';
import { loadPlanFile } from '../workflow/load-plan-file.js';
import type { GlobalOptions } from './global-options.js';

interface PrepareOptions extends GlobalOptions {
  input?: string[];
  /** `-l key=value`, repeatable. */
  label?: string[];
  priority?: string;
  workspace?: string;
  /** `--allow-workspace <dir>`: this broad folder (root, home, above the Baton home) may be the workspace. */
  allowWorkspace?: string;
  id?: string;
  agent?: string;
  /** A shadow run (`--shadow`). */
  shadow?: boolean;
}

/** The inputs of `--input name=value` (repeatable); `example` shows the form in a refusal. */
export function parseInputs(
  pairs: readonly string[] = [],
  example = 'topic="durable execution"',
): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `--input "${pair}": expected name=value, e.g. --input ${example}`,
      );
    }
    inputs[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return inputs;
}

/**
 * Loads and checks a plan for `run`, `propose` and `schedule add|update` (the runtime's one
 * prepareRun, runtime/commands/start-commands.ts): everything is validated before any database is
 * opened, so bad input creates and changes nothing.
 */
export async function prepareRunFromCli(
  planPath: string,
  options: PrepareOptions,
  extra: { awaitingApproval?: boolean } = {},
): Promise<PreparedRun> {
  const loaded = await loadPlanFile(planPath);
  const plan = namesUnknownPlans(loaded.plan)
    ? await withHomePlans(loaded.plan, planPath, options)
    : loaded.plan;
  const prepared = prepareRun(
    { home: resolveHome(options) },
    {
      plan,
      planPath,
      inputs: () => parseInputs(options.input),
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.allowWorkspace ? { allowWorkspace: options.allowWorkspace } : {}),
      ...(options.id ? { runId: options.id } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
      ...(options.shadow ? { shadow: true } : {}),
      ...(extra.awaitingApproval ? { awaitingApproval: true } : {}),
      ...(options.label ? { labels: parseLabels(options.label, '--label') } : {}),
      ...(options.priority === undefined ? {} : { priority: parsePriority(options.priority, '--priority') }),
    },
  );
  for (const warning of prepared.warnings)
    process.stderr.write(`baton: warning: ${planPath}: ${warning.where}: ${warning.message}\n`);
  return prepared;
}

/**
 * The plan with its `plan: { name }` children found in the home (runtime/known-plans.ts). Opens the
 * store only to read, and only when it exists: a home with no database knows no plan.
 */
async function withHomePlans(plan: Plan, planPath: string, options: GlobalOptions): Promise<Plan> {
  if (!storeExists(options)) return withKnownPlans(plan, async () => null, `${planPath}: `);
  const store = await openStore(options, 'read');
  try {
    return await withKnownPlans(plan, homePlans(store), `${planPath}: `);
  } finally {
    await store.close();
  }
}
