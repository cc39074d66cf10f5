import { commandContext } from '../../runtime/commands/context.js';
import { formatDuration } from '../../runtime/format.js';
import { resolveHome } from '../../runtime/home.js';
import { openStore, storeSecrets } from '../../runtime/open-store.js';
import { parseDurationOption } from '../../runtime/parse-values.js';
import { proposeRun } from '../../runtime/proposal.js';
import { decideRun } from '../../runtime/run-actions.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';
import { prepareRunFromCli } from '../prepare-run.js';
import type { RunOptions } from './run.js';

/** `baton propose <plan>`: validate and store a run that waits for a human's approval. */
export async function proposeCommand(planPath: string, options: RunOptions): Promise<number> {
  const { prepared } = await prepareRunFromCli(planPath, options, { awaitingApproval: true });
  const store = await openStore(options);
  try {
    const ctx = commandContext({ store, home: resolveHome(options), secretValues: storeSecrets(options) });
    const { run, summary } = await proposeRun(ctx, { run: prepared, idGiven: options.id !== undefined });
    if (options.json) printJson({ ...run, summary });
    else process.stdout.write(`${summary}\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/** `baton approve <run> [--delay 2m]` and `baton reject <run>`. */
export async function decideCommand(
  decision: 'approve' | 'reject',
  runId: string,
  options: GlobalOptions & { delay?: string },
): Promise<number> {
  const store = await openStore(options, 'read');
  try {
    const delayMs = options.delay ? parseDurationOption(options.delay, '--delay') : 0;
    const summary = await decideRun(store, decision, runId, delayMs, Date.now());
    if (options.json) printJson(summary);
    else if (decision === 'approve') {
      const pause = delayMs > 0 ? `, waiting ${formatDuration(delayMs)} between steps` : '';
      process.stdout.write(`run ${runId} approved${pause}; drive it with baton check (or baton worker)\n`);
    } else process.stdout.write(`run ${runId} rejected; nothing of it will run\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
