import { BatonError } from '../../core/errors.js';
import { resolveStep } from '../../runtime/commands/run-commands.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { readResultArgument } from '../../runtime/step-result-text.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

/**
 * `baton resolve <run> <step> --result <file|json>`: a human says what a blocked step came to
 * (typically an unknown outcome after a crash mid-effect); the step succeeds with that result.
 */
export async function resolveCommand(
  runId: string,
  stepId: string,
  options: GlobalOptions & { result?: string },
): Promise<number> {
  if (options.result === undefined) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      '--result is required: a JSON value, or a file holding one (or text)',
    );
  }
  // Read (a file) and checked before any store is opened.
  const result = readResultArgument(options.result);
  return withCommandContext(options, async (ctx) => {
    const summary = await resolveStep(ctx, { runId, stepId, result: result.text, where: result.where });
    if (options.json) printJson(summary);
    else {
      const next = summary.status === 'running' ? ' (baton check or baton worker drives it)' : '';
      process.stdout.write(`step ${stepId} resolved; run is ${summary.status}${next}\n`);
    }
    return EXIT.ok;
  });
}
