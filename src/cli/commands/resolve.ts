import { BatonError } from '../../core/errors.js';
import { openStore } from '../../runtime/open-store.js';
import { resolveRunStep } from '../../runtime/run-actions.js';
import { readResult } from '../../runtime/step-result-text.js';
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
  const result = readResult(options.result);
  const store = await openStore(options, 'read');
  try {
    const summary = await resolveRunStep(store, runId, stepId, result, Date.now());
    if (options.json) printJson(summary);
    else {
      const next = summary.status === 'running' ? ' (baton check or baton worker drives it)' : '';
      process.stdout.write(`step ${stepId} resolved; run is ${summary.status}${next}\n`);
    }
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
