import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { runNotFound } from '../../core/errors.js';
import { maskedReads } from '../../runtime/masked-reads.js';
import { openStore, storeSecrets } from '../../runtime/open-store.js';
import { EXIT } from '../exit-codes.js';
import type { GlobalOptions } from '../global-options.js';

/** `baton export <run>`: the run's event log as JSON lines (one event per line), to stdout or a file. */
export async function exportCommand(
  runId: string,
  options: GlobalOptions & { output?: string },
): Promise<number> {
  const store = maskedReads(await openStore(options, 'read'), process.env, storeSecrets(options));
  try {
    if (!(await store.getRun(runId))) throw runNotFound(runId);
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
  } finally {
    await store.close();
  }
}
