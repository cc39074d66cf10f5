import { forkRun } from '../../runtime/commands/rerun-commands.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { loadPlanFile } from '../../workflow/load-plan-file.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';
import { parseInputs } from '../prepare-run.js';

interface ForkOptions extends GlobalOptions {
  from: string;
  plan?: string;
  input?: string[];
  id?: string;
  workspace?: string;
  allowWorkspace?: string;
  agent?: string;
  keepFiles?: boolean;
}

/**
 * `baton fork <run> --from <step>`: a new run keeping the results of the steps that do not depend
 * on `<step>` (runtime/commands/rerun-commands.ts: kept results are copied as stored, the answer
 * is masked).
 */
export async function forkCommand(runId: string, options: ForkOptions): Promise<number> {
  const inputs = parseInputs(options.input, 'region=eu');
  const loaded = options.plan === undefined ? undefined : await loadPlanFile(options.plan);
  return withCommandContext(options, async (ctx) => {
    const fork = await forkRun(ctx, {
      runId,
      from: options.from,
      ...(loaded ? { plan: loaded.plan, planPath: options.plan! } : {}),
      inputs,
      ...(options.id ? { newRunId: options.id } : {}),
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.allowWorkspace ? { allowWorkspace: options.allowWorkspace } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
      keepFiles: options.keepFiles === true,
    });
    const id = fork.summary.id;
    if (options.json) {
      printJson({ ...fork.summary, forkedFrom: { runId, stepId: fork.from }, ...fork });
      return EXIT.ok;
    }
    const restored = fork.filesRestoredBefore
      ? `, its files as they were before ${fork.filesRestoredBefore}`
      : '';
    const workspace = fork.copiedFrom
      ? `${fork.workspace} (a copy of ${fork.copiedFrom}${restored})`
      : fork.workspace;
    const lines = [
      `run ${id} forked from run ${runId} at step ${fork.from}`,
      `kept from ${runId}: ${fork.kept.length > 0 ? fork.kept.join(', ') : 'nothing'}`,
      `workspace: ${workspace}`,
      `run is ${fork.summary.status} (baton check or baton worker drives it; baton diff ${runId} ${id} compares them)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return EXIT.ok;
  });
}
