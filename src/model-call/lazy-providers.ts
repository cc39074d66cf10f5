import type { AnthropicProviderOptions } from './providers/anthropic-provider.js';
import type { OpenAiProviderOptions } from './providers/openai-provider.js';
import type {
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ProviderCallOptions,
  ProviderKind,
} from './types.js';

/**
 * The provider adapters as the package and the model executor hand them out: the official SDK
 * (about 40 MB and 300 ms to load for `@anthropic-ai/sdk`, which also pulls in OpenTelemetry) is
 * imported by the first `complete`, not when the provider is made, so a process that never calls
 * a model never loads it. The adapter is built once, on that first call, with the options given
 * here (an API key left out is read from the environment then).
 */
function lazyProvider(kind: ProviderKind, name: string, build: () => Promise<ModelProvider>): ModelProvider {
  let provider: Promise<ModelProvider> | undefined;
  return {
    name,
    kind,
    async complete(request: ModelRequest, options?: ProviderCallOptions): Promise<ModelResponse> {
      provider ??= build();
      return (await provider).complete(request, options);
    },
  };
}

/** An adapter over the official `@anthropic-ai/sdk` (Messages); see anthropic-provider.ts. */
export function createAnthropicProvider(options: AnthropicProviderOptions = {}): ModelProvider {
  const name = options.name ?? 'anthropic';
  return lazyProvider('anthropic', name, async () =>
    (await import('./providers/anthropic-provider.js')).createAnthropicProvider({ ...options, name }),
  );
}

/** An adapter over the official `openai` SDK (Chat Completions); see openai-provider.ts. */
export function createOpenAiProvider(options: OpenAiProviderOptions = {}): ModelProvider {
  const name = options.name ?? 'openai';
  return lazyProvider('openai', name, async () =>
    (await import('./providers/openai-provider.js')).createOpenAiProvider({ ...options, name }),
  );
}
