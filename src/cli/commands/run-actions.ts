import { withExistingStore } from '../../runtime/open-store.js';
import type { RunSummary, Store } from '../../store/store.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';
import { requireRun } from '../status-view.js';

/**
 * The write commands on a stored run: `baton retry|skip <run> <step>` and
 * `baton cancel|resume <run>` (the read commands are in read.ts).
 */
type Command = 'retry' | 'skip' | 'cancel' | 'resume';

const COMMANDS: Record<
  Command,
  { apply: (store: Store, runId: string, stepId: string, now: number) => Promise<RunSummary>; done: string }
> = {
  retry: {
    apply: (store, runId, stepId, now) => store.retryStep(runId, stepId, now),
    done: 'step {step} will run again',
  },
  skip: {
    apply: (store, runId, stepId, now) => store.skipStep(runId, stepId, now),
    done: 'step {step} skipped',
  },
  cancel: { apply: (store, runId, _stepId, now) => store.cancelRun(runId, now), done: 'run {run} cancelled' },
  resume: {
    apply: (store, runId, _stepId, now) => store.resumeRun(runId, now),
    done: 'run {run} resumed with a raised budget',
  },
};

/** `baton retry|skip <run> <step>`, `baton cancel|resume <run>`: one transaction each. */
export async function manageCommand(
  command: Command,
  runId: string,
  stepId: string | undefined,
  options: GlobalOptions,
): Promise<number> {
  return withExistingStore(options, async (store) => {
    await requireRun(store, runId);
    const { apply, done } = COMMANDS[command];
    const summary = await apply(store, runId, stepId ?? '', Date.now());
    if (options.json) printJson(summary);
    else {
      const what = done.replace('{step}', stepId ?? '').replace('{run}', runId);
      const next = summary.status === 'running' ? ' (baton check or baton worker drives it)' : '';
      process.stdout.write(`${what}; run is ${summary.status}${next}\n`);
    }
    return EXIT.ok;
  });
}
