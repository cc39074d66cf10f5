import { type OpenCommandContext, openCommandContextWaiting } from '../runtime/open-store.js';
import type { GlobalOptions } from './global-options.js';
import { watchStopSignals } from './stop-signal.js';

/**
 * `openStoreWaiting` for a command, answered as its command context: retry lines go to stderr as
 * `baton <command>: …`, and SIGINT or SIGTERM during the wait ends it (null: the command exits
 * without having run anything).
 */
export async function openStoreUntilStopped(
  options: GlobalOptions,
  maxMs: number,
  command: string,
): Promise<OpenCommandContext | null> {
  const stop = new AbortController();
  const signals = watchStopSignals();
  void signals.received.then(() => stop.abort());
  try {
    return await openCommandContextWaiting(options, {
      maxMs,
      signal: stop.signal,
      say: (line) => process.stderr.write(`baton ${command}: ${line}\n`),
    });
  } finally {
    signals.remove();
  }
}
