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

/** Two runs' usage together (a resume that found no session, then the fresh start), or undefined for none. */
export function sumAgentUsage(a: AgentUsage | undefined, b: AgentUsage | undefined): AgentUsage | undefined {
  if (!a || !b) return a ?? b;
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: a.costUsd + b.costUsd,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    costReported: a.costReported || b.costReported,
  };
}
