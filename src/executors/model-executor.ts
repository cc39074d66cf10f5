import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { RandomSource } from '../core/backoff.js';
import type { BatonEvent } from '../core/events.js';
import type { ModelStepSpec, ModelTargetSpec } from '../core/plan/types.js';
import { DEFAULT_API_KEY_ENV } from '../core/run-secrets.js';
import { runAgent } from '../model-call/agent-loop.js';
import type { BackoffSettings } from '../model-call/call-state.js';
import type { HarnessClock } from '../model-call/clock.js';
// The SDK of a provider is loaded by its first call: a process without model steps never loads one.
import { createAnthropicProvider, createOpenAiProvider } from '../model-call/lazy-providers.js';
import { resolveCapabilities } from '../model-call/model-capabilities.js';
import { DEFAULT_PRICES, type ModelPrice } from '../model-call/pricing.js';
import type { RecoveryLimits } from '../model-call/recovery-budget.js';
import type { ToolDefinition } from '../model-call/tools.js';
import type { ModelCapabilities, ModelProvider } from '../model-call/types.js';
import { renderStepText } from './render-step-text.js';
import {
  type AttemptResult,
  attemptLogPath,
  type ExecutionContext,
  type StepExecutor,
} from './step-executor.js';

export interface ModelExecutorOptions {
  /** The tool registry: a model step lists the names it may use. */
  tools?: readonly ToolDefinition<never>[];
  /** Where API keys are read from (`apiKeyEnv`). Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Builds the provider of a target; default: the official SDK adapters. */
  createProvider?: (target: ModelTargetSpec, apiKey: string) => ModelProvider;
  /** Context window, output limit and tool support per model, over the built-in table. */
  capabilities?: Record<string, Partial<ModelCapabilities>>;
  prices?: Record<string, ModelPrice>;
  limits?: Partial<RecoveryLimits>;
  backoff?: Partial<BackoffSettings>;
  clock?: HarnessClock;
  random?: RandomSource;
}

/** The built-in table, under the executor's overrides, under the plan's own `capabilities`. */
function capabilitiesOf(
  target: ModelTargetSpec,
  overrides: Record<string, Partial<ModelCapabilities>> | undefined,
): ModelCapabilities {
  const resolved = resolveCapabilities(target.model, overrides);
  const own = target.capabilities ?? {};
  return {
    contextWindow: own.contextWindow ?? resolved.contextWindow,
    maxOutputTokens: own.maxOutputTokens ?? resolved.maxOutputTokens,
    supportsTools: own.supportsTools ?? resolved.supportsTools,
  };
}

/** The text of a model step kept as its result (what `{{steps.<id>.summary}}` gives later steps). */
const MODEL_RESULT_MAX_CHARS = 64_000;

/** Runs a `model:` step through the recovery harness; recovery is recorded in the run's events. */
export class ModelExecutor implements StepExecutor {
  private readonly tools: Map<string, ToolDefinition<never>>;

  constructor(private readonly options: ModelExecutorOptions = {}) {
    this.tools = new Map((options.tools ?? []).map((tool) => [tool.name, tool]));
  }

  async execute(context: ExecutionContext): Promise<AttemptResult> {
    const { claim } = context;
    const spec = claim.step.model;
    const invalid = (message: string): AttemptResult => ({
      outcome: { ok: false, failureClass: 'invalid', message },
      logPath: null,
    });
    if (!spec) return invalid('the step has no model call');
    const unknown = spec.tools.filter((name) => !this.tools.has(name));
    if (unknown.length > 0) {
      const known = [...this.tools.keys()].join(', ') || 'none';
      return invalid(`unknown tool(s) ${unknown.join(', ')} (registered: ${known})`);
    }
    const prompt = renderStepText(spec.prompt, context);
    if (!prompt.ok) return invalid(prompt.message);
    const system = spec.system === undefined ? null : renderStepText(spec.system, context);
    if (system && !system.ok) return invalid(system.message);
    return this.call(context, spec, { prompt: prompt.text, ...(system ? { system: system.text } : {}) });
  }

  /**
   * One call of `spec` with its texts already rendered, through the recovery harness: the step's
   * own (`execute`), or a grader's for a verification gate, which logs at `logPath` (relative to
   * the home) instead of the attempt's log.
   */
  async call(
    context: ExecutionContext,
    spec: ModelStepSpec,
    texts: { prompt: string; system?: string },
    logPath = attemptLogPath(context.claim),
  ): Promise<AttemptResult> {
    const { claim } = context;
    const primary = this.provider(spec, spec);
    if (!primary.ok)
      return { outcome: { ok: false, failureClass: 'fatal', message: primary.message }, logPath: null };
    const fallback = spec.fallback ? this.provider(spec.fallback, spec) : null;
    if (fallback && !fallback.ok) {
      return { outcome: { ok: false, failureClass: 'fatal', message: fallback.message }, logPath: null };
    }

    let recording: Promise<void> = Promise.resolve();
    const onEvent = (event: BatonEvent) => {
      recording = recording.then(() => context.recordEvents([event])).catch(() => undefined);
    };
    // The step's timeout fires this signal too (engine/attempt-deadline.ts decides what it counts as).
    const signal = context.signal;
    const overrides = this.options.capabilities;
    const result = await runAgent({
      provider: primary.provider,
      model: spec.model,
      capabilities: capabilitiesOf(spec, overrides),
      ...(texts.system === undefined ? {} : { system: texts.system }),
      prompt: texts.prompt,
      tools: spec.tools.map((name) => this.tools.get(name)!),
      maxOutputTokens: spec.maxOutputTokens,
      maxTurns: spec.maxTurns,
      ...(fallback?.ok && spec.fallback
        ? {
            fallback: {
              provider: fallback.provider,
              model: spec.fallback.model,
              capabilities: capabilitiesOf(spec.fallback, overrides),
            },
          }
        : {}),
      effects: context.effects,
      scope: `${claim.runId}:${claim.stepId}`,
      stepId: claim.stepId,
      signal,
      timeoutMs: spec.requestTimeoutMs,
      secrets: [primary.apiKey, ...(fallback?.ok ? [fallback.apiKey] : [])],
      onEvent,
      ...(this.options.limits ? { limits: this.options.limits } : {}),
      ...(this.options.backoff ? { backoff: this.options.backoff } : {}),
      ...(this.options.clock ? { clock: this.options.clock } : {}),
      ...(this.options.random ? { random: this.options.random } : {}),
      prices: {
        ...(this.options.prices ?? DEFAULT_PRICES),
        ...(spec.price ? { [spec.model]: spec.price } : {}),
        ...(spec.fallback?.price ? { [spec.fallback.model]: spec.fallback.price } : {}),
      },
    });
    await recording;
    const usage = {
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      costUsd: result.costUsd,
    };
    const logText = result.ok
      ? result.text
      : `${result.failureClass} (${result.reason}): ${result.message}\n`;
    await mkdir(dirname(join(context.home, logPath)), { recursive: true, mode: 0o700 });
    await writeFile(join(context.home, logPath), logText, { mode: 0o600 });
    if (result.ok) {
      const summary =
        result.text.length > MODEL_RESULT_MAX_CHARS
          ? `${result.text.slice(0, MODEL_RESULT_MAX_CHARS)}…`
          : result.text;
      const degraded = result.degraded
        ? {
            degraded:
              'answered in a degraded way: by the fallback model, or with text still cut at the output limit',
          }
        : {};
      return { outcome: { ok: true, summary, outputs: [], usage, ...degraded }, logPath };
    }
    return {
      outcome: {
        ok: false,
        failureClass: signal.aborted ? 'interrupted' : result.failureClass,
        message: result.message,
        usage,
      },
      logPath,
    };
  }

  private provider(
    target: ModelTargetSpec,
    { stream, stallTimeoutMs }: Pick<ModelStepSpec, 'stream'> & { stallTimeoutMs?: number | undefined },
  ): { ok: true; provider: ModelProvider; apiKey: string } | { ok: false; message: string } {
    const env = this.options.env ?? process.env;
    const keyEnv = target.apiKeyEnv ?? DEFAULT_API_KEY_ENV[target.provider];
    const apiKey = env[keyEnv] ?? '';
    if (apiKey === '' && target.baseUrl === undefined) {
      return {
        ok: false,
        message: `the environment variable ${keyEnv} holding the ${target.provider} API key is not set`,
      };
    }
    const key = apiKey === '' ? 'no-key' : apiKey;
    if (this.options.createProvider)
      return { ok: true, provider: this.options.createProvider(target, key), apiKey: key };
    const base = {
      apiKey: key,
      stream,
      ...(stallTimeoutMs === undefined ? {} : { stallTimeoutMs }),
      ...(target.baseUrl === undefined ? {} : { baseURL: target.baseUrl }),
    };
    const provider =
      target.provider === 'openai'
        ? createOpenAiProvider({ ...base, name: 'openai' })
        : createAnthropicProvider({ ...base, name: 'anthropic' });
    return { ok: true, provider, apiKey: key };
  }
}
