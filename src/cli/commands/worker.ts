import { type EngineCliOptions, engineFromCli } from '../engine-setup.js';
import { EXIT } from '../exit-codes.js';
import { type GlobalOptions, openStore, parseDurationOption, resolveHome } from '../home.js';
import { LineProgress } from '../progress.js';

export interface WorkerOptions extends GlobalOptions, EngineCliOptions {
  grace?: string;
  quiet?: boolean;
}

/** `baton worker`: stay up, run steps as they become due, sleep until the next due time. */
export async function workerCommand(options: WorkerOptions): Promise<number> {
  const home = resolveHome(options);
  const store = openStore(home);
  const graceMs = options.grace ? parseDurationOption(options.grace, '--grace') : 30_000;
  try {
    const progress = options.quiet ? null : new LineProgress(process.stdout, true);
    const engine = engineFromCli(
      store,
      home,
      options,
      progress ? { onClaim: progress.onClaim, onSettle: progress.onSettle } : {},
    );
    let signals = 0;
    const stop = () => {
      signals++;
      // A second signal stops at once: in-flight attempts are aborted and retried later.
      engine.stop(signals > 1 ? 0 : graceMs);
      process.stderr.write(
        signals > 1
          ? 'baton worker: stopping now\n'
          : `baton worker: finishing in-flight steps (up to ${graceMs} ms)\n`,
      );
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    process.stderr.write(`baton worker: watching ${home}\n`);
    await engine.run({ kind: 'forever' });
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
