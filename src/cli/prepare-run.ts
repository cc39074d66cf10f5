import { BatonError } from '../core/errors.js';
import type { Plan } from '../core/plan/types.js';
import { resolveHome } from '../runtime/home.js';
import { preparePlanRun } from '../runtime/plan-run.js';
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

/**
 * Loads and checks a plan for `run` and `propose` (runtime/plan-run.ts): everything is validated
 * before any database is opened, so bad input creates and changes nothing.
 */
export async function prepareRunFromCli(
  planPath: string,
  options: PrepareOptions,
  extra: { awaitingApproval?: boolean } = {},
): Promise<{ plan: Plan; prepared: NewRun }> {
  const loaded = await loadPlanFile(planPath);
  const { plan, prepared, warnings } = preparePlanRun(
    { plan: loaded.plan, planPath },
    {
      home: resolveHome(options),
      inputs: () => parseInputs(options.input),
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.allowWorkspace ? { allowWorkspace: options.allowWorkspace } : {}),
      ...(options.id ? { runId: options.id } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
      ...(options.shadow ? { shadow: true } : {}),
      ...(extra.awaitingApproval ? { awaitingApproval: true } : {}),
    },
  );
  for (const warning of warnings)
    process.stderr.write(`baton: warning: ${planPath}: ${warning.where}: ${warning.message}\n`);
  return { plan, prepared };
}
