import { Engine, type EngineOptions } from '../engine/engine.js';
import type { AgentCliExecutorOptions } from '../executors/agent-cli-executor.js';
import { FunctionExecutor, FunctionRegistry } from '../executors/function-executor.js';
import type { AttemptResult, ExecutionContext, StepExecutor } from '../executors/step-executor.js';
import type { Store } from '../store/store.js';
import { agentFromEnvOrOption, ownerId, parseDurationOption, parsePositiveInt } from './home.js';

export interface EngineCliOptions {
  agent?: string;
  concurrency?: string;
  lease?: string;
}

/** Loads the agent executor (and its command policy) only when a step actually runs: `check` with nothing due starts faster. */
class LazyAgentExecutor implements StepExecutor {
  private executor: Promise<StepExecutor> | null = null;

  constructor(private readonly options: AgentCliExecutorOptions) {}

  async execute(context: ExecutionContext): Promise<AttemptResult> {
    this.executor ??= import('../executors/agent-cli-executor.js').then(
      (m) => new m.AgentCliExecutor(this.options),
    );
    return (await this.executor).execute(context);
  }
}

/** Builds the engine the same way for run, check and worker: options from flags, then BATON_* variables. */
export function engineFromCli(
  store: Store,
  home: string,
  options: EngineCliOptions,
  observers: Pick<EngineOptions, 'onClaim' | 'onSettle'> = {},
): Engine {
  const concurrency = options.concurrency ?? process.env.BATON_CONCURRENCY;
  const lease = options.lease ?? process.env.BATON_LEASE_MS;
  const defaultAgent = agentFromEnvOrOption(options.agent);
  return new Engine({
    store,
    home,
    owner: ownerId(),
    executors: {
      agent: new LazyAgentExecutor(defaultAgent ? { defaultAgent } : {}),
      fn: new FunctionExecutor(new FunctionRegistry()),
    },
    ...(concurrency ? { concurrency: parsePositiveInt(concurrency, '--concurrency', 256) } : {}),
    ...(lease ? { leaseMs: Math.max(100, parseDurationOption(lease, '--lease')) } : {}),
    ...observers,
  });
}
