import { BatonError } from '../../core/errors.js';
import type { FailureClass } from '../../core/failure.js';
import { parseLabels } from '../../core/labels.js';
import {
  type BulkAnswer,
  cancelRuns,
  type RunsFilter,
  retryBlocked,
} from '../../runtime/commands/bulk-commands.js';
import { applyRunCommand, type RunCommand } from '../../runtime/commands/run-commands.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { parseDurationOption } from '../../runtime/parse-values.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

/**
 * The write commands on a stored run: `baton retry|skip <run> <step>` and
 * `baton cancel|resume <run>` (the read commands are in read.ts).
 */
type Command = RunCommand;

const DONE: Record<Command, string> = {
  retry: 'step {step} will run again',
  skip: 'step {step} skipped',
  cancel: 'run {run} cancelled',
  resume: 'run {run} resumed with a raised budget',
};

/** `baton retry|skip <run> <step>`, `baton cancel|resume <run>`: one transaction each. */
export async function manageCommand(
  command: Command,
  runId: string,
  stepId: string | undefined,
  options: GlobalOptions & { compensate?: boolean },
): Promise<number> {
  return withCommandContext(options, async (ctx) => {
    const summary = await applyRunCommand(ctx, {
      command,
      runId,
      ...(stepId === undefined ? {} : { stepId }),
      ...(options.compensate === undefined ? {} : { compensate: options.compensate }),
    });
    const done = DONE[command];
    if (options.json) printJson(summary);
    else if (command === 'cancel' && summary.status !== 'cancelled') {
      process.stdout.write(
        `run ${runId} cancelled: its cleanup (compensate:, finally:) runs first, then it is cancelled; run is ${summary.status} (baton check or baton worker drives it)\n`,
      );
    } else {
      const what = done.replace('{step}', stepId ?? '').replace('{run}', runId);
      const next = summary.status === 'running' ? ' (baton check or baton worker drives it)' : '';
      process.stdout.write(`${what}; run is ${summary.status}${next}\n`);
    }
    return EXIT.ok;
  });
}

interface BulkOptions extends GlobalOptions {
  blocked?: boolean;
  class?: string;
  since?: string;
  plan?: string;
  label?: string[];
  dryRun?: boolean;
  /** cancel: --compensate / --no-compensate. */
  compensate?: boolean;
}

/**
 * `baton retry <run> <step>` or `retry --blocked [filters]`; `baton cancel <run>` or `cancel
 * [filters]`: one run, or every run the filters choose, each printed as it is touched.
 */
export async function bulkOrOne(
  command: 'retry' | 'cancel',
  runId: string | undefined,
  stepId: string | undefined,
  options: BulkOptions,
): Promise<number> {
  const filter = filterOf(options);
  const filtered = Object.keys(filter).length > 0 || options.dryRun === true;
  if (runId !== undefined) {
    if (filtered)
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${command} <run>: the filters (--blocked, --class, --since, --plan, --label, --dry-run) choose runs; give them without a run id`,
      );
    if (command === 'retry' && stepId === undefined)
      throw new BatonError(
        'INVALID_ARGUMENT',
        'retry <run> <step>: name the step to retry (baton status <run> shows them)',
      );
    return manageCommand(command, runId, stepId, options);
  }
  if (command === 'retry' && !options.blocked)
    throw new BatonError(
      'INVALID_ARGUMENT',
      'retry: name <run> <step>, or give --blocked to retry every blocked step the filters choose',
    );
  return withCommandContext(options, async (ctx) => {
    const request = {
      filter,
      ...(options.dryRun ? { dryRun: true } : {}),
      ...(options.compensate === undefined ? {} : { compensate: options.compensate }),
    };
    const answer = command === 'retry' ? await retryBlocked(ctx, request) : await cancelRuns(ctx, request);
    if (options.json) printJson(answer);
    else process.stdout.write(bulkText(command, answer));
    return EXIT.ok;
  });
}

function filterOf(options: BulkOptions): RunsFilter {
  return {
    ...(options.blocked ? { blocked: true } : {}),
    ...(options.class !== undefined ? { failureClass: options.class as FailureClass } : {}),
    ...(options.since !== undefined ? { sinceMs: parseDurationOption(options.since, '--since') } : {}),
    ...(options.plan !== undefined ? { planName: options.plan } : {}),
    ...(options.label !== undefined ? { labels: parseLabels(options.label, '--label') } : {}),
  };
}

/** One line per run touched (or that would be), then the count. */
function bulkText(command: 'retry' | 'cancel', answer: BulkAnswer): string {
  const lines = answer.runs.map((run) => {
    const steps = run.stepIds ? ` step${run.stepIds.length === 1 ? '' : 's'} ${run.stepIds.join(', ')}` : '';
    const why = run.reason ? `: ${run.reason}` : '';
    return `${run.outcome} run ${run.runId}${run.planName ? ` (${run.planName})` : ''}${steps}${why}`;
  });
  const refused = answer.runs.filter((run) => run.outcome === 'refused').length;
  const touched = answer.runs.length - refused;
  const verb = answer.dryRun ? `would ${command}` : command === 'retry' ? 'retried' : 'cancelled';
  lines.push(
    answer.runs.length === 0
      ? `no run matches: nothing to ${command}`
      : `${touched} run${touched === 1 ? '' : 's'} ${verb}${refused > 0 ? `, ${refused} refused (they moved on meanwhile)` : ''}${answer.dryRun ? ' (dry run: nothing changed)' : command === 'retry' ? ' (baton check or baton worker drives them)' : ''}`,
  );
  if (answer.limited)
    lines.push(
      `at most ${answer.runs.length} runs per command: narrow the filters and run it again for the rest`,
    );
  return `${lines.join('\n')}\n`;
}
