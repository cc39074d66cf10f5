import { rerunRun } from '../../runtime/commands/rerun-commands.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

interface RerunOptions extends GlobalOptions {
  from: string;
  only?: boolean;
  redoEffects?: boolean;
  /** `--keep a,b --keep c`, collected by the option's parser. */
  keep?: string[];
  keepEffects?: boolean;
  by?: string;
  keepFiles?: boolean;
}

/**
 * `baton rerun <run> --from <step> [--only] [--redo-effects]`: the step and the steps after it run
 * again (runtime/commands/rerun-commands.ts, one transaction); a worker or `baton check` drives them.
 */
/** The step ids of `--keep`, blanks dropped. */
function stepList(values: readonly string[]): string[] {
  return values.map((id) => id.trim()).filter((id) => id !== '');
}

export async function rerunCommand(runId: string, options: RerunOptions): Promise<number> {
  return withCommandContext(options, async (ctx) => {
    const summary = await rerunRun(ctx, {
      runId,
      from: options.from,
      only: options.only === true,
      redoEffects: options.redoEffects === true,
      ...(options.keep === undefined ? {} : { keep: stepList(options.keep) }),
      ...(options.keepEffects === true ? { keepEffects: true } : {}),
      ...(options.by === undefined ? {} : { by: options.by }),
      keepFiles: options.keepFiles === true,
    });
    const { steps, stale, kept, effects } = summary.rerun;
    if (options.json) {
      printJson({ ...summary, rerun: { from: options.from, ...summary.rerun } });
      return EXIT.ok;
    }
    const listed = steps.length > 10 ? `${steps.slice(0, 10).join(', ')}, …` : steps.join(', ');
    const lines = [`run ${runId}: ${steps.length} step(s) will run again: ${listed}`];
    if (kept.length > 0) lines.push(`kept as they are, not run: ${kept.join(', ')}`);
    if (stale.length > 0)
      lines.push(
        `kept, resting on an older result of ${options.from}: ${stale.join(', ')} (baton rerun ${runId} --from ${stale[0]} brings them up to date)`,
      );
    if (summary.filesRestored)
      lines.push(
        `files: put back as they were before ${summary.filesRestored.stepId} (baton diff ${runId} --files shows what each step changed)`,
      );
    else if (summary.filesKept) lines.push(`files: ${summary.filesKept}`);
    if (effects.length === 0) lines.push('side effects: none of the steps that run again has any');
    else
      lines.push(
        `side effects: ${effects.join(', ')} will run again${options.redoEffects ? ', and their recorded effects (ctx.effect) happen again' : ' (effects they recorded with ctx.effect are not repeated)'}`,
      );
    lines.push(`run is ${summary.status} (baton check or baton worker drives it)`);
    process.stdout.write(`${lines.join('\n')}\n`);
    return EXIT.ok;
  });
}
