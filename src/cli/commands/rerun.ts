import { rerunRun } from '../../runtime/commands/rerun-commands.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

interface RerunOptions extends GlobalOptions {
  from: string;
  only?: boolean;
  redoEffects?: boolean;
  by?: string;
  keepFiles?: boolean;
}

/**
 * `baton rerun <run> --from <step> [--only] [--redo-effects]`: the step and the steps after it run
 * again (runtime/commands/rerun-commands.ts, one transaction); a worker or `baton check` drives them.
 */
export async function rerunCommand(runId: string, options: RerunOptions): Promise<number> {
  return withCommandContext(options, async (ctx) => {
    const summary = await rerunRun(ctx, {
      runId,
      from: options.from,
      only: options.only === true,
      redoEffects: options.redoEffects === true,
      ...(options.by === undefined ? {} : { by: options.by }),
      keepFiles: options.keepFiles === true,
    });
    const { steps, stale } = summary.rerun;
    if (options.json) {
      printJson({ ...summary, rerun: { from: options.from, ...summary.rerun } });
      return EXIT.ok;
    }
    const listed = steps.length > 10 ? `${steps.slice(0, 10).join(', ')}, …` : steps.join(', ');
    const lines = [`run ${runId}: ${steps.length} step(s) will run again: ${listed}`];
    if (stale.length > 0)
      lines.push(
        `kept, resting on an older result of ${options.from}: ${stale.join(', ')} (baton rerun ${runId} --from ${stale[0]} brings them up to date)`,
      );
    if (summary.filesRestored)
      lines.push(
        `files: put back as they were before ${summary.filesRestored.stepId} (baton diff ${runId} --files shows what each step changed)`,
      );
    else if (summary.filesKept) lines.push(`files: ${summary.filesKept}`);
    if (!options.redoEffects) lines.push('effects already recorded (ctx.effect) are not repeated');
    lines.push(`run is ${summary.status} (baton check or baton worker drives it)`);
    process.stdout.write(`${lines.join('\n')}\n`);
    return EXIT.ok;
  });
}
