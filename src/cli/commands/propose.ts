import { approvalDelayMs, decideRun } from '../../runtime/commands/run-commands.js';
import { formatDuration } from '../../runtime/format.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { proposeRun } from '../../runtime/proposal.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';
import { prepareRunFromCli } from '../prepare-run.js';
import type { RunOptions } from './run.js';

/** `baton propose <plan>`: validate and store a run that waits for a human's approval. */
export async function proposeCommand(planPath: string, options: RunOptions): Promise<number> {
  const prepared = await prepareRunFromCli(planPath, options, { awaitingApproval: true });
  return withCommandContext(
    options,
    async (ctx) => {
      const { run, summary } = await proposeRun(ctx, prepared);
      if (options.json) printJson({ ...run, summary });
      else process.stdout.write(`${summary}\n`);
      return EXIT.ok;
    },
    'write',
  );
}

/** `baton approve <run> [--delay 2m|none]` and `baton reject <run>`. */
export async function decideCommand(
  decision: 'approve' | 'reject',
  runId: string,
  options: GlobalOptions & { delay?: string },
): Promise<number> {
  return withCommandContext(options, async (ctx) => {
    const delayMs = approvalDelayMs(options.delay);
    const summary = await decideRun(ctx, { runId, decision, delay: delayMs });
    if (options.json) printJson(summary);
    else if (decision === 'approve') {
      const pause = delayMs > 0 ? `, waiting ${formatDuration(delayMs)} between steps` : '';
      process.stdout.write(`run ${runId} approved${pause}; drive it with baton check (or baton worker)\n`);
    } else process.stdout.write(`run ${runId} rejected; nothing of it will run\n`);
    return EXIT.ok;
  });
}
