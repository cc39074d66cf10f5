import type { CommandContext } from '../runtime/commands/context.js';
import { engineFor } from '../runtime/create-engine.js';
import type { EngineSettings } from '../runtime/settings.js';
import type { Engine, EngineMeter, EngineOptions } from '../runtime/types.js';

/** The engine flags of `run`, `check` and `worker`, as commander hands them over. */
export interface EngineCliOptions {
  concurrency?: string;
  lease?: string;
  store?: string;
}

/**
 * SIGINT/SIGTERM: stop claiming and let in-flight steps finish for `graceMs`; a second signal
 * stops at once (running agents' process groups are killed, their steps retried later).
 * Returns a function that removes the handlers.
 */
export function handleStopSignals(engine: Engine, graceMs: number, say: (line: string) => void): () => void {
  let signals = 0;
  const stop = () => {
    signals++;
    engine.stop(signals > 1 ? 0 : graceMs);
    say(signals > 1 ? 'stopping now' : `finishing in-flight steps (up to ${graceMs} ms; again to stop now)`);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
}

/** The runtime's engine, with the CLI's progress observers, its failure lines on stderr, and `meter` for `/metrics`. */
export function engineFromCli(
  ctx: CommandContext,
  settings: EngineSettings,
  observers: Pick<EngineOptions, 'onClaim' | 'onSettle'> = {},
  meter?: EngineMeter,
): Engine {
  return engineFor(ctx, {
    settings,
    ...(meter === undefined ? {} : { meter }),
    observers: {
      ...observers,
      onError: (error) =>
        process.stderr.write(
          `baton: store busy or failing, retrying: ${error instanceof Error ? error.message : String(error)}\n`,
        ),
      onHookFailure: (message) => process.stderr.write(`baton: ${message}\n`),
    },
  });
}
