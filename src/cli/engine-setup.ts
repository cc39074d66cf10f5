import { Engine, type EngineOptions } from '../engine/engine.js';
import { AgentCliExecutor } from '../executors/agent-cli-executor.js';
import { FunctionExecutor, FunctionRegistry } from '../executors/function-executor.js';
import type { Store } from '../store/store.js';
import { agentFromEnvOrOption, ownerId, parseDurationOption, parsePositiveInt } from './home.js';

export interface EngineCliOptions {
  agent?: string;
  concurrency?: string;
  lease?: string;
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
      agent: new AgentCliExecutor(defaultAgent ? { defaultAgent } : {}),
      fn: new FunctionExecutor(new FunctionRegistry()),
    },
    ...(concurrency ? { concurrency: parsePositiveInt(concurrency, '--concurrency', 256) } : {}),
    ...(lease ? { leaseMs: Math.max(100, parseDurationOption(lease, '--lease')) } : {}),
    ...observers,
  });
}
