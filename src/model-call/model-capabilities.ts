import type { ModelCapabilities } from './types.js';

/**
 * Context window, output ceiling and tool support of common models, from the providers' model pages.
 * Edit freely: a name is matched exactly, then by the longest entry it starts with (so dated or tagged
 * names such as `claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`, `llama3.1:8b-instruct-q4_K_M` find
 * their family). Config overrides win over this table (see {@link resolveCapabilities}).
 */
export const MODEL_CAPABILITIES: Readonly<Record<string, ModelCapabilities>> = {
  // OpenAI
  'gpt-4o': { contextWindow: 128_000, maxOutputTokens: 16_384, supportsTools: true },
  'gpt-4o-mini': { contextWindow: 128_000, maxOutputTokens: 16_384, supportsTools: true },
  'gpt-4.1': { contextWindow: 1_047_576, maxOutputTokens: 32_768, supportsTools: true },
  'gpt-4.1-mini': { contextWindow: 1_047_576, maxOutputTokens: 32_768, supportsTools: true },
  'gpt-4.1-nano': { contextWindow: 1_047_576, maxOutputTokens: 32_768, supportsTools: true },
  o3: { contextWindow: 200_000, maxOutputTokens: 100_000, supportsTools: true },
  'o3-mini': { contextWindow: 200_000, maxOutputTokens: 100_000, supportsTools: true },
  'o4-mini': { contextWindow: 200_000, maxOutputTokens: 100_000, supportsTools: true },
  'gpt-5': { contextWindow: 400_000, maxOutputTokens: 128_000, supportsTools: true },
  'gpt-5-mini': { contextWindow: 400_000, maxOutputTokens: 128_000, supportsTools: true },
  'gpt-5-nano': { contextWindow: 400_000, maxOutputTokens: 128_000, supportsTools: true },
  // Anthropic (the standard 200k window; the 1M-token beta must be configured as an override)
  'claude-opus-4': { contextWindow: 200_000, maxOutputTokens: 32_000, supportsTools: true },
  'claude-opus-4-5': { contextWindow: 200_000, maxOutputTokens: 64_000, supportsTools: true },
  'claude-sonnet-4': { contextWindow: 200_000, maxOutputTokens: 64_000, supportsTools: true },
  'claude-sonnet-4-5': { contextWindow: 200_000, maxOutputTokens: 64_000, supportsTools: true },
  'claude-haiku-4-5': { contextWindow: 200_000, maxOutputTokens: 64_000, supportsTools: true },
  'claude-3-7-sonnet': { contextWindow: 200_000, maxOutputTokens: 64_000, supportsTools: true },
  'claude-3-5-sonnet': { contextWindow: 200_000, maxOutputTokens: 8_192, supportsTools: true },
  'claude-3-5-haiku': { contextWindow: 200_000, maxOutputTokens: 8_192, supportsTools: true },
  // Google
  'gemini-2.5-pro': { contextWindow: 1_048_576, maxOutputTokens: 65_536, supportsTools: true },
  'gemini-2.5-flash': { contextWindow: 1_048_576, maxOutputTokens: 65_536, supportsTools: true },
  // Ollama names (`family:tag`). The window is what Ollama *serves* by default (OLLAMA_CONTEXT_LENGTH,
  // 4096), not what the weights allow (128k for llama3.1): past it Ollama silently drops the start of
  // the prompt instead of failing. Raise `num_ctx` on the server and override the window to match.
  'llama3.1': { contextWindow: 4_096, maxOutputTokens: 2_048, supportsTools: true },
  'llama3.2': { contextWindow: 4_096, maxOutputTokens: 2_048, supportsTools: true },
  'qwen2.5-coder': { contextWindow: 4_096, maxOutputTokens: 2_048, supportsTools: true },
  qwen3: { contextWindow: 4_096, maxOutputTokens: 2_048, supportsTools: true },
};

/**
 * What an unknown model is assumed to offer: small on purpose (an 8k window and 4k of output), so that
 * a request is compacted or its output budget lowered early rather than refused by the provider. Tools
 * are assumed supported; a model that lacks them fails its first call loudly. Configure the real
 * numbers as an override.
 */
export const DEFAULT_CAPABILITIES: Readonly<ModelCapabilities> = {
  contextWindow: 8_192,
  maxOutputTokens: 4_096,
  supportsTools: true,
};

/**
 * The capabilities of `model`: the table entry (exact name, else longest prefix, else
 * {@link DEFAULT_CAPABILITIES}), then the fields of the matching override (same matching) on top.
 * A routing prefix such as `openai/` or `anthropic/` (OpenRouter names) is ignored.
 */
export function resolveCapabilities(
  model: string,
  overrides: Readonly<Record<string, Partial<ModelCapabilities>>> = {},
): ModelCapabilities {
  const base = findEntry(MODEL_CAPABILITIES, model) ?? DEFAULT_CAPABILITIES;
  const override = findEntry(overrides, model) ?? {};
  const resolved: ModelCapabilities = { ...base };
  if (override.contextWindow !== undefined) resolved.contextWindow = override.contextWindow;
  if (override.maxOutputTokens !== undefined) resolved.maxOutputTokens = override.maxOutputTokens;
  if (override.supportsTools !== undefined) resolved.supportsTools = override.supportsTools;
  return resolved;
}

function findEntry<T>(table: Readonly<Record<string, T>>, model: string): T | undefined {
  if (Object.hasOwn(table, model)) return table[model];
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    const prefix = key.toLowerCase();
    if (!startsAtBoundary(name, prefix)) continue;
    if (best === undefined || key.length > best.length) best = key;
  }
  return best === undefined ? undefined : table[best];
}

/** `gpt-4o` starts `gpt-4o-2024-08-06` but not `gpt-4o1`: the prefix must end at a separator. */
function startsAtBoundary(name: string, prefix: string): boolean {
  if (!name.startsWith(prefix)) return false;
  return name.length === prefix.length || /[^a-z0-9]/.test(name.charAt(prefix.length));
}
