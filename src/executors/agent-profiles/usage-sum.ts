import type { AgentUsage } from './types.js';

/** A usage with nothing counted yet. */
export function emptyUsage(): AgentUsage {
  return {
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costReported: false,
  };
}

/** Undefined when nothing was counted: "no usage reported" differs from "zero tokens". */
export function usageOrUndefined(usage: AgentUsage): AgentUsage | undefined {
  return usage.inputTokens + usage.outputTokens + usage.costUsd === 0 ? undefined : usage;
}
