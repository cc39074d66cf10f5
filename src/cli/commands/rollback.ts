import { rollbackRun } from '../../runtime/commands/file-commands.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

/**
 * `baton rollback <run> <step>`: the run's workspace as it was before the step
 * (runtime/commands/file-commands.ts); the steps keep their state.
 */
export async function rollbackCommand(
  runId: string,
  stepId: string,
  options: GlobalOptions & { by?: string },
): Promise<number> {
  return withCommandContext(options, async (ctx) => {
    const restored = await rollbackRun(ctx, { runId, stepId, ...(options.by ? { by: options.by } : {}) });
    if (options.json) {
      printJson({ runId, ...restored });
      return EXIT.ok;
    }
    process.stdout.write(
      `run ${runId}: workspace put back as it was before ${restored.stepId} (tree ${restored.tree.slice(0, 12)}; it held ${restored.previous.slice(0, 12)} before, recorded on the timeline)\n`,
    );
    return EXIT.ok;
  });
}
