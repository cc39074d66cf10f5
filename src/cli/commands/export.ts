import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { withCommandContext } from '../../runtime/open-store.js';
import { requireRun } from '../../runtime/run-reads.js';
import { EXIT } from '../exit-codes.js';
import type { GlobalOptions } from '../global-options.js';

/** `baton export <run>`: the run's event log as JSON lines (one event per line), to stdout or a file. */
export async function exportCommand(
  runId: string,
  options: GlobalOptions & { output?: string },
): Promise<number> {
  return withCommandContext(options, async ({ store }) => {
    await requireRun(store, runId);
    const events = await store.getEvents(runId);
    const out = options.output ? createWriteStream(options.output, { mode: 0o600 }) : process.stdout;
    for (const event of events) {
      if (!out.write(`${JSON.stringify(event)}\n`)) await once(out, 'drain');
    }
    if (options.output) {
      (out as ReturnType<typeof createWriteStream>).end();
      await once(out, 'finish');
      process.stderr.write(`wrote ${events.length} event(s) to ${options.output}\n`);
    }
    return EXIT.ok;
  });
}
