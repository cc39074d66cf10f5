/**
 * `baton-steps/testing`: tools for testing code that uses Baton, kept out of the package root.
 * The fault-injecting mock provider (what `baton mock-llm` serves) and a clock that runs the
 * model-call harness's waits faster. Importing this loads nothing heavy: the mock's modules and
 * node:http load with the first `startMockLlmServer` call.
 */
import type { MockLlmOptions, MockLlmServer } from './testing/mock-llm/types.js';

export { type HarnessClock, scaledClock, systemClock } from './model-call/clock.js';
export { MemoryEffectLedger } from './model-call/tools.js';
export type { FaultName, FaultSpec } from './testing/mock-llm/faults.js';
export type { MockLlmOptions, MockLlmServer } from './testing/mock-llm/types.js';

/** Starts the fault-injecting mock provider (see `baton mock-llm`). */
export async function startMockLlmServer(options: MockLlmOptions = {}): Promise<MockLlmServer> {
  return (await import('./testing/mock-llm/server.js')).startMockLlmServer(options);
}
