import { openStoreWaiting } from '../runtime/open-store.js';
import type { Store } from '../store/store.js';
import type { GlobalOptions } from './global-options.js';
import { watchStopSignals } from './stop-signal.js';

/**
 * `openStoreWaiting` for a command: retry lines go to stderr as `baton <command>: …`, and SIGINT or
 * SIGTERM during the wait ends it (null: the command exits without having run anything).
 */
export async function openStoreUntilStopped(
  options: GlobalOptions,
  maxMs: number,
  command: string,
): Promise<Store | null> {
  const stop = new AbortController();
  const signals = watchStopSignals();
  void signals.received.then(() => stop.abort());
  try {
    return await openStoreWaiting(options, {
      maxMs,
      signal: stop.signal,
      say: (line) => process.stderr.write(`baton ${command}: ${line}\n`),
    });
  } finally {
    signals.remove();
  }
}
