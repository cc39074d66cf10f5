import type { FailureClass } from '../core/failure.js';
import { failureFingerprint } from '../core/fingerprint.js';
import { recordableMessage } from '../core/redact.js';
import { type CallModelOptions, callModelWithRecovery } from './call-model.js';
import type { HarnessEvent } from './call-state.js';
import { ToolRunner } from './execute-tool-call.js';
import { costUsd, type ModelPrice } from './pricing.js';
import { RecoveryBudget } from './recovery-budget.js';
import { type EffectLedger, MemoryEffectLedger, type ToolDefinition, toolSpecOf } from './tools.js';
import type { ChatMessage, ModelUsage } from './types.js';

export interface RunAgentOptions
  extends Omit<CallModelOptions, 'request' | 'budget' | 'callId' | 'capabilities'> {
  model: string;
  system?: string;
  prompt: string;
  tools?: readonly ToolDefinition<never>[];
  /** Output budget of each model call. Default 4,096. */
  maxOutputTokens?: number;
  temperature?: number;
  /** Model turns before the loop stops. Default 20. */
  maxTurns?: number;
  /** The recovery budget of the whole loop; default a fresh run budget. */
  budget?: RecoveryBudget;
  capabilities?: CallModelOptions['capabilities'];
  /** Where write results are recorded; default in memory (a Baton step passes its durable ledger). */
  effects?: EffectLedger;
  /** Prefix of default idempotency keys: run id + step id inside Baton. Default `agent`. */
  scope?: string;
  /** The same tool failure this many times in a row → one "change approach" message, then stop. Default 3. */
  noProgressAfter?: number;
  /** Stop (class `budget`) once tokens (input + output) or cost reach these. */
  maxTokens?: number;
  maxCostUsd?: number;
  prices?: Record<string, ModelPrice>;
}

export type AgentResult =
  | {
      ok: true;
      text: string;
      turns: number;
      usage: ModelUsage;
      costUsd: number;
      messages: ChatMessage[];
      degraded: boolean;
    }
  | {
      ok: false;
      failureClass: FailureClass;
      reason: string;
      message: string;
      turns: number;
      usage: ModelUsage;
      costUsd: number;
      messages: ChatMessage[];
    };

export const CHANGE_APPROACH_MESSAGE =
  'This is not working: the same tool call has failed the same way several times. Change approach: use different arguments, another tool, or answer with what you have.';

/**
 * A tool-calling agent loop over {@link callModelWithRecovery}: tool arguments are validated
 * before anything runs, tool failures go back to the model as `Error[code]: message`, writes run
 * at most once per idempotency key, repeated identical failures stop the loop (`no_progress`),
 * and usage and cost accumulate so a budget can stop it.
 */
export async function runAgent(options: RunAgentOptions): Promise<AgentResult> {
  const budget = options.budget ?? new RecoveryBudget();
  const runner = new ToolRunner(
    options.tools ?? [],
    options.effects ?? new MemoryEffectLedger(),
    options.scope ?? 'agent',
  );
  const specs = (options.tools ?? []).map(toolSpecOf);
  const maxTurns = options.maxTurns ?? 20;
  const noProgressAfter = options.noProgressAfter ?? 3;
  const signal = options.signal ?? new AbortController().signal;
  const emit = (event: HarnessEvent) => options.onEvent?.(event);
  const usage: ModelUsage = { inputTokens: 0, outputTokens: 0 };
  let cost = 0;
  let degraded = false;
  let messages: ChatMessage[] = [
    ...(options.system ? [{ role: 'system' as const, content: options.system }] : []),
    { role: 'user', content: options.prompt },
  ];
  const results = new Map<string, { content: string; isError: boolean }>();
  let streak = { fingerprint: '', count: 0 };
  let warned = false;
  const stop = (failureClass: FailureClass, reason: string, message: string, turns: number): AgentResult => ({
    ok: false,
    failureClass,
    reason,
    message: recordableMessage(message, options.secrets ?? []),
    turns,
    usage,
    costUsd: cost,
    messages,
  });

  for (let turn = 1; turn <= maxTurns; turn++) {
    const call = await callModelWithRecovery({
      ...options,
      budget,
      callId: `${options.scope ?? 'agent'}:turn-${turn}`,
      request: {
        model: options.model,
        messages,
        ...(specs.length > 0 ? { tools: specs } : {}),
        maxOutputTokens: options.maxOutputTokens ?? 4096,
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      },
    });
    usage.inputTokens += call.usage.inputTokens;
    usage.outputTokens += call.usage.outputTokens;
    cost += costUsd(call.model, call.usage, options.prices);
    messages = call.messages;
    if (!call.ok)
      return stop(
        call.failure.failureClass,
        call.failure.reason,
        call.diagnosis ?? call.failure.message,
        turn,
      );
    if (call.outcome === 'degraded') degraded = true;
    const overBudget = budgetExceeded(options, usage, cost);
    const response = call.response;
    if (response.toolCalls.length === 0) {
      if (overBudget) return stop('budget', 'budget_exceeded', overBudget, turn);
      return { ok: true, text: response.text, turns: turn, usage, costUsd: cost, messages, degraded };
    }
    if (overBudget) return stop('budget', 'budget_exceeded', overBudget, turn);
    messages = [...messages, { role: 'assistant', content: response.text, toolCalls: response.toolCalls }];
    for (const toolCall of response.toolCalls) {
      let result = results.get(toolCall.id);
      if (!result) {
        const outcome = await runner.execute(toolCall, signal);
        if (outcome.ok) {
          result = { content: outcome.content, isError: false };
          if (outcome.replayed)
            emit({ type: 'tool.replayed', ...stepOf(options), tool: toolCall.name, key: outcome.key ?? '' });
          streak = { fingerprint: '', count: 0 };
        } else {
          const message = recordableMessage(outcome.message, options.secrets ?? []);
          const fingerprint = failureFingerprint(
            `${toolCall.name}\u0000${outcome.argsHash}`,
            'agent_failed',
            `${outcome.code} ${outcome.message}`,
          );
          emit({
            type: 'tool.failed',
            ...stepOf(options),
            tool: toolCall.name,
            code: outcome.code,
            fingerprint,
            message,
          });
          if (outcome.fatal) return stop('unknown_outcome', outcome.code, outcome.message, turn);
          streak =
            streak.fingerprint === fingerprint
              ? { fingerprint, count: streak.count + 1 }
              : { fingerprint, count: 1 };
          result = { content: `Error[${outcome.code}]: ${outcome.message}`, isError: true };
        }
        results.set(toolCall.id, result);
      }
      messages.push({
        role: 'tool',
        toolCallId: toolCall.id,
        name: toolCall.name,
        content: result.content,
        isError: result.isError,
      });
    }
    if (streak.count >= noProgressAfter) {
      if (warned) {
        return stop(
          'no_progress',
          'repeated_tool_failure',
          `the same tool failure repeated ${streak.count} times in a row: ${results.get(response.toolCalls.at(-1)!.id)?.content ?? ''}`,
          turn,
        );
      }
      warned = true;
      messages.push({ role: 'user', content: CHANGE_APPROACH_MESSAGE });
    }
  }
  return stop('budget', 'max_turns', `the agent did not finish within ${maxTurns} turns`, maxTurns);
}

function stepOf(options: RunAgentOptions): { stepId?: string } {
  return options.stepId === undefined ? {} : { stepId: options.stepId };
}

function budgetExceeded(options: RunAgentOptions, usage: ModelUsage, cost: number): string | null {
  const tokens = usage.inputTokens + usage.outputTokens;
  if (options.maxTokens !== undefined && tokens >= options.maxTokens) {
    return `the token budget is spent: ${tokens} of ${options.maxTokens} tokens used`;
  }
  if (options.maxCostUsd !== undefined && cost >= options.maxCostUsd) {
    return `the cost budget is spent: $${cost.toFixed(4)} of $${options.maxCostUsd}`;
  }
  return null;
}
