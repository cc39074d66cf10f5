/**
 * Baton's public TypeScript surface. The CLI is a thin shell over these same pieces.
 * Importing it loads no model SDK, OpenTelemetry, ajv, YAML parser or pg: each loads when first
 * used (test/package-lazy-loading.test.ts). Testing tools (the mock provider, a fast clock) come
 * from `baton-steps/testing` (src/testing.ts). test/package-exports.test.ts lists what is exported,
 * so that a change to this surface is deliberate.
 */
export { BatonError, type BatonErrorCode, isBatonError } from './core/errors.js';
export type { BatonEvent, BatonEventType, StoredEvent } from './core/events.js';
export { FAILURE_CLASSES, type FailureClass, type OutputArtifact, type StepOutcome } from './core/failure.js';
export { validatePlanObject } from './core/plan/parse.js';
export type {
  AgentSpec,
  Plan,
  PlanInput,
  PlanLimits,
  PlanStep,
  PromptVia,
  RetryPolicy,
  SandboxMode,
} from './core/plan/types.js';
export type { RunStatus, StepResult, StepStatus } from './core/run-state.js';
export { Engine, type EngineMode, type EngineOptions, type EngineReport } from './engine/engine.js';
export { type StartRunOptions, startRun } from './engine/start-run.js';
export { AgentCliExecutor, type AgentCliExecutorOptions } from './executors/agent-cli-executor.js';
export { checkAgentCommand } from './executors/command-policy.js';
export {
  FunctionExecutor,
  FunctionRegistry,
  type FunctionStepContext,
  StepFailure,
  type StepFunction,
} from './executors/function-executor.js';
export { ModelExecutor, type ModelExecutorOptions } from './executors/model-executor.js';
export { probeSandbox, type SandboxProbe } from './executors/sandbox.js';
export type { AttemptResult, ExecutionContext, StepExecutor } from './executors/step-executor.js';
export { type AgentResult, type RunAgentOptions, runAgent } from './harness/agent-loop.js';
export { type CallModelOptions, callModelWithRecovery, type ModelCallResult } from './harness/call-model.js';
export type { BackoffSettings, HarnessEvent } from './harness/call-state.js';
export { classifyModelError } from './harness/classify-model-error.js';
export { type HarnessClock, systemClock } from './harness/clock.js';
export { type CompactionHook, defaultCompaction } from './harness/compaction.js';
export { detectTruncation } from './harness/detect-truncation.js';
export { createAnthropicProvider, createOpenAiProvider } from './harness/lazy-providers.js';
export { MODEL_CAPABILITIES, resolveCapabilities } from './harness/model-capabilities.js';
export { DEFAULT_PRICES, type ModelPrice } from './harness/pricing.js';
export type { AnthropicProviderOptions } from './harness/providers/anthropic-provider.js';
export type { OpenAiProviderOptions } from './harness/providers/openai-provider.js';
export { RecoveryBudget, type RecoveryLimits } from './harness/recovery-budget.js';
export { type EffectLedger, type ToolDefinition, ToolError } from './harness/tools.js';
export {
  type ChatMessage,
  type FinishReason,
  ModelCallError,
  type ModelCapabilities,
  type ModelFailure,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ToolCall,
} from './harness/types.js';
export { loadPlanFile } from './plan/load-plan-file.js';
export { parsePlanText } from './plan/parse-plan-text.js';
export { type OpenPostgresOptions, PostgresStore } from './store/postgres/postgres-store.js';
export { SqliteStore } from './store/sqlite/sqlite-store.js';
export type { AttemptRecord, RunDetail, RunSummary, Store } from './store/store.js';
export { Baton, type BatonOptions, RunNotSucceededError } from './workflow/baton.js';
export {
  defineWorkflow,
  type ReconcileResult,
  type StepContext,
  type StepPolicy,
  Workflow,
  type WorkflowResults,
} from './workflow/define-workflow.js';
