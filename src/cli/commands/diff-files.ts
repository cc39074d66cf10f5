import { fileChanges } from '../../runtime/commands/file-commands.js';
import { CHANGE_MARKS } from '../../runtime/file-changes.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

/**
 * `baton diff <run> --files [<step>]`: what each checkpointed step added (A), changed (M) and
 * removed (D), each step followed by the unified diff of its text files. Exit 0; 2 for an unknown
 * run or step.
 */
export async function diffFilesCommand(
  runId: string,
  stepId: string | undefined,
  options: GlobalOptions,
): Promise<number> {
  return withCommandContext(options, async (ctx) => {
    const answer = await fileChanges(ctx, { runId, ...(stepId === undefined ? {} : { stepId }) });
    if (options.json) {
      printJson(answer);
      return EXIT.ok;
    }
    if (answer.steps.length === 0) {
      const which = stepId === undefined ? 'any step' : `step ${stepId}`;
      process.stdout.write(
        `run ${runId}: no workspace checkpoint of ${which} (checkpoint: workspace in the plan records them)\n`,
      );
      return EXIT.ok;
    }
    const out: string[] = [];
    for (const step of answer.steps) {
      if (step.after === null) {
        out.push(`${step.stepId}: no attempt ended with a record of the files yet`);
        continue;
      }
      const count = (change: keyof typeof CHANGE_MARKS) =>
        step.changes.filter((c) => c.change === change).length;
      out.push(
        `${step.stepId} (attempt ${step.attempt}): ${count('added')} added, ${count('changed')} changed, ${count('removed')} removed`,
      );
      for (const change of step.changes) out.push(`  ${CHANGE_MARKS[change.change]} ${change.path}`);
      if (step.patch !== '') out.push('', step.patch.trimEnd());
      if (step.truncated)
        out.push(`(diff cut; baton diff ${runId} --files ${step.stepId} --json has the same cut)`);
      out.push('');
    }
    process.stdout.write(`${out.join('\n').trimEnd()}\n`);
    return EXIT.ok;
  });
}
