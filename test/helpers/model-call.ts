import type { HarnessEvent } from '../../src/model-call/call-state.js';
import type { HarnessClock } from '../../src/model-call/clock.js';
import { createAnthropicProvider } from '../../src/model-call/providers/anthropic-provider.js';
import { createOpenAiProvider } from '../../src/model-call/providers/openai-provider.js';
import type { ModelProvider } from '../../src/model-call/types.js';
import { startMockLlmServer } from '../../src/testing/mock-llm/server.js';
import type { MockLlmOptions, MockLlmServer } from '../../src/testing/mock-llm/types.js';

export type Wire = 'openai' | 'anthropic';

/** A clock that never sleeps: it records each wait and moves time forward by it. */
export function fakeClock(): HarnessClock & { slept: number[]; time: number } {
  const clock = {
    slept: [] as number[],
    time: 1_000_000,
    now: () => clock.time,
    sleep: async (ms: number) => {
      clock.slept.push(ms);
      clock.time += ms;
    },
  };
  return clock;
}

/** The real SDK adapter of `wire`, pointed at the mock server. */
export function providerFor(
  server: MockLlmServer,
  wire: Wire,
  options: { stream?: boolean; apiKey?: string; name?: string } = {},
): ModelProvider {
  const apiKey = options.apiKey ?? (wire === 'openai' ? 'sk-test-openai-key' : 'sk-ant-test-key');
  return wire === 'openai'
    ? createOpenAiProvider({
        baseURL: server.openaiBaseUrl,
        apiKey,
        stream: options.stream ?? false,
        ...(options.name ? { name: options.name } : {}),
      })
    : createAnthropicProvider({
        baseURL: server.anthropicBaseUrl,
        apiKey,
        stream: options.stream ?? false,
        ...(options.name ? { name: options.name } : {}),
      });
}

/** Starts a mock server for a test and returns it with an event collector. */
export async function mockServer(options: MockLlmOptions = {}): Promise<MockLlmServer> {
  return startMockLlmServer(options);
}

export function eventTypes(events: HarnessEvent[]): string[] {
  return events.map((event) => event.type);
}

/** What `promise` rejected with; fails when it resolves. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}
