import { BatonError } from '../../core/errors.js';
import { trustedPrograms } from '../../executors/trusted-programs.js';
import { forkRun } from '../../runtime/fork-run.js';
import { resolveHome } from '../../runtime/home.js';
import { openStore } from '../../runtime/open-store.js';
import { defaultAgent } from '../../runtime/settings.js';
import { loadPlanFile } from '../../workflow/load-plan-file.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

interface ForkOptions extends GlobalOptions {
  from: string;
  plan?: string;
  input?: string[];
  id?: string;
  workspace?: string;
  allowWorkspace?: string;
  agent?: string;
}

function parseInputs(pairs: readonly string[] = []): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw new BatonError(
        'INVALID_ARGUMENT',
        `--input "${pair}": expected name=value, e.g. --input region=eu`,
      );
    inputs[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return inputs;
}

/**
 * `baton fork <run> --from <step>`: a new run keeping the results of the steps that do not depend
 * on `<step>` (runtime/fork-run.ts). It reads the store unmasked: kept results are copied as stored.
 */
export async function forkCommand(runId: string, options: ForkOptions): Promise<number> {
  const inputs = parseInputs(options.input);
  const loaded = options.plan === undefined ? undefined : await loadPlanFile(options.plan);
  const home = resolveHome(options);
  const agent = defaultAgent(options.agent);
  const store = await openStore(options, 'read');
  try {
    const fork = await forkRun(store, {
      runId,
      from: options.from,
      ...(loaded ? { plan: loaded.plan, planPath: options.plan! } : {}),
      inputs,
      ...(options.id ? { newRunId: options.id } : {}),
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.allowWorkspace ? { allowWorkspace: options.allowWorkspace } : {}),
      batonHome: home,
      trust: () => trustedPrograms(home, process.env),
      ...(agent ? { defaultAgent: agent } : {}),
    });
    const id = fork.summary.id;
    if (options.json) {
      printJson({ ...fork.summary, forkedFrom: { runId, stepId: fork.from }, ...fork });
      return EXIT.ok;
    }
    const workspace = fork.copiedFrom ? `${fork.workspace} (a copy of ${fork.copiedFrom})` : fork.workspace;
    const lines = [
      `run ${id} forked from run ${runId} at step ${fork.from}`,
      `kept from ${runId}: ${fork.kept.length > 0 ? fork.kept.join(', ') : 'nothing'}`,
      `workspace: ${workspace}`,
      `run is ${fork.summary.status} (baton check or baton worker drives it; baton diff ${runId} ${id} compares them)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
