import { resolveHome } from '../../runtime/home.js';
import { storeTarget, storeWaitMs } from '../../runtime/open-store.js';
import { parseDurationOption } from '../../runtime/parse-values.js';
import { engineSettings } from '../../runtime/settings.js';
import { type EngineCliOptions, engineFromCli, handleStopSignals } from '../engine-setup.js';
import { EXIT } from '../exit-codes.js';
import type { GlobalOptions } from '../global-options.js';
import { LineProgress } from '../progress.js';
import { openStoreUntilStopped } from '../store-wait.js';

interface WorkerOptions extends GlobalOptions, EngineCliOptions {
  grace?: string;
  quiet?: boolean;
  storeWait?: string;
}

/** `baton worker`: stay up, run steps as they become due, sleep until the next due time. */
export async function workerCommand(options: WorkerOptions): Promise<number> {
  const settings = engineSettings(options);
  const graceMs = options.grace ? parseDurationOption(options.grace, '--grace') : 30_000;
  const home = resolveHome(options);
  const store = await openStoreUntilStopped(
    options,
    storeWaitMs(options.storeWait, Number.POSITIVE_INFINITY),
    'worker',
  );
  // SIGINT or SIGTERM while the store was still unreachable: nothing ran, nothing to finish.
  if (store === null) return EXIT.ok;
  try {
    const progress = options.quiet ? null : new LineProgress(process.stdout, true);
    const engine = engineFromCli(
      store,
      home,
      settings,
      progress ? { onClaim: progress.onClaim, onSettle: progress.onSettle } : {},
    );
    const removeHandlers = handleStopSignals(engine, graceMs, (line) =>
      process.stderr.write(`baton worker: ${line}\n`),
    );
    process.stderr.write(`baton worker: watching ${storeTarget(options).label}\n`);
    try {
      await engine.run({ kind: 'forever' });
    } finally {
      removeHandlers();
    }
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
