import { BatonError } from '../../core/errors.js';
import { collectGarbage } from '../../runtime/garbage-collection.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { parseDurationOption } from '../../runtime/parse-values.js';
import { EXIT } from '../exit-codes.js';
import type { GlobalOptions } from '../global-options.js';

/**
 * `baton gc --older-than 30d`: removes runs that finished before then (their steps, events,
 * attempts and logs), a batch at a time, then every result artifact no stored step references any
 * more; with `--vacuum`, gives the freed space back at once (runtime/garbage-collection.ts).
 */
export async function gcCommand(
  options: GlobalOptions & { olderThan?: string; dryRun?: boolean; vacuum?: boolean },
): Promise<number> {
  if (options.olderThan === undefined) {
    throw new BatonError('INVALID_ARGUMENT', '--older-than is required, e.g. --older-than 30d');
  }
  const olderThanMs = parseDurationOption(options.olderThan, '--older-than');
  // The ids go to stdout as each batch is removed (`--json`), never all held at once.
  const report = options.json ? new JsonReport() : null;
  const done = await withCommandContext(options, (ctx) =>
    collectGarbage(ctx, {
      olderThanMs,
      dryRun: options.dryRun ?? false,
      vacuum: options.vacuum ?? false,
      ...(report ? { onRuns: (ids: readonly string[]) => report.runs(ids) } : {}),
    }),
  );
  const { runs, artifactsRemoved, bytesFreed, dryRun, vacuumed, checkpointRuns } = done;
  if (report) report.end({ artifactsRemoved, bytesFreed, dryRun, vacuumed, checkpointRuns });
  else {
    const verb = dryRun ? 'would remove' : 'removed';
    process.stdout.write(
      `${verb} ${runs} finished run(s) and ${artifactsRemoved} unreferenced artifact(s) (${bytesFreed} bytes)${checkpointRuns > 0 ? `; the workspace checkpoints of ${checkpointRuns} of them` : ''}${vacuumed ? '; database vacuumed' : ''}\n`,
    );
  }
  return EXIT.ok;
}

/**
 * The `--json` report, `{ runs: [...ids], artifactsRemoved, bytesFreed, dryRun, vacuumed,
 * checkpointRuns }` as printJson writes it, its ids written as they come. A failure part way leaves
 * it unterminated (and the exit code and stderr say so).
 */
class JsonReport {
  private count = 0;

  runs(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const items = ids.map((id) => `\n    ${JSON.stringify(id)}`).join(',');
    process.stdout.write(`${this.count === 0 ? '{\n  "runs": [' : ','}${items}`);
    this.count += ids.length;
  }

  end(rest: Record<string, unknown>): void {
    const tail = JSON.stringify(rest, null, 2).slice(1);
    process.stdout.write(`${this.count === 0 ? '{\n  "runs": [],' : '\n  ],'}${tail}\n`);
  }
}
