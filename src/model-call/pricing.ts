import type { ModelUsage } from './types.js';

/** US dollars per million tokens. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
}

/**
 * List prices of a few common models, matched by longest prefix (dated names match their family).
 * Prices change: override them with `prices` in config or code; an unknown model costs 0 and
 * only its tokens count against a budget.
 */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  'gpt-4o-mini': { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  'gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10 },
  'gpt-4.1-mini': { inputPerMTok: 0.4, outputPerMTok: 1.6 },
  'gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8 },
  'gpt-5-mini': { inputPerMTok: 0.25, outputPerMTok: 2 },
  'gpt-5': { inputPerMTok: 1.25, outputPerMTok: 10 },
  'claude-opus-4': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-sonnet-4': { inputPerMTok: 3, outputPerMTok: 15 },
  'claude-haiku-4': { inputPerMTok: 1, outputPerMTok: 5 },
  'claude-3-5-haiku': { inputPerMTok: 0.8, outputPerMTok: 4 },
});

function priceOf(model: string, prices: Record<string, ModelPrice> = DEFAULT_PRICES): ModelPrice | null {
  if (prices[model]) return prices[model];
  let best: string | null = null;
  for (const name of Object.keys(prices)) {
    if (model.startsWith(name) && (best === null || name.length > best.length)) best = name;
  }
  return best === null ? null : prices[best]!;
}

export function costUsd(model: string, usage: ModelUsage, prices?: Record<string, ModelPrice>): number {
  const price = priceOf(model, prices);
  if (!price) return 0;
  return (usage.inputTokens * price.inputPerMTok + usage.outputTokens * price.outputPerMTok) / 1_000_000;
}
