import { Engine, type EngineOptions } from '../engine/engine.js';
import { FunctionExecutor, FunctionRegistry } from '../executors/function-executor.js';
import type { AttemptResult, ExecutionContext, StepExecutor } from '../executors/step-executor.js';
import type { Store } from '../store/store.js';
import type { EngineSettings } from './engine-settings.js';
import { ownerId } from './home.js';

export { type EngineCliOptions, type EngineSettings, engineSettingsFromCli } from './engine-settings.js';

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

/**
 * Loads an executor (the agent CLI's command policy, the model SDKs) only when a step of its kind
 * actually runs: `check` with nothing due starts faster.
 */
class LazyExecutor implements StepExecutor {
  private executor: Promise<StepExecutor> | null = null;

  constructor(private readonly load: () => Promise<StepExecutor>) {}

  async execute(context: ExecutionContext): Promise<AttemptResult> {
    this.executor ??= this.load();
    return (await this.executor).execute(context);
  }
}

/** Builds the engine the same way for run, check and worker. Stored runs carry their agent command. */
export function engineFromCli(
  store: Store,
  home: string,
  settings: EngineSettings,
  observers: Pick<EngineOptions, 'onClaim' | 'onSettle'> = {},
): Engine {
  return new Engine({
    store,
    home,
    owner: ownerId(),
    executors: {
      agent: new LazyExecutor(() =>
        import('../executors/agent-cli-executor.js').then((m) => new m.AgentCliExecutor({})),
      ),
      fn: new FunctionExecutor(new FunctionRegistry()),
      model: new LazyExecutor(() =>
        import('../executors/model-executor.js').then((m) => new m.ModelExecutor({})),
      ),
    },
    ...settings,
    ...observers,
    onError: (error) =>
      process.stderr.write(
        `baton: store busy or failing, retrying: ${error instanceof Error ? error.message : String(error)}\n`,
      ),
    onHookFailure: (message) => process.stderr.write(`baton: ${message}\n`),
  });
}
