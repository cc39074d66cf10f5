/**
 * Baton's public TypeScript surface. The CLI is a thin shell over these same pieces.
 * Importing it loads no model SDK, OpenTelemetry, ajv, YAML parser or pg: each loads when first
 * used (test/package-lazy-loading.test.ts). Testing tools (the mock provider, a fast clock) come
 * from `baton-steps/testing` (src/testing.ts); the stores and the storage contract (with the
 * worker protocol) from `baton-steps/store` (src/store.ts). test/package-exports.test.ts lists
 * what is exported, so that a change to this surface is deliberate.
 *
 * The engine, run creation, the executors, the command policy and the sandbox probe are internal:
 * `Baton` is their public face (`start`, `startPlan`, `result`, `worker`, `functions`), and the
 * CLI and the console use them from their own modules.
 */

export type { DeclarableClass } from './core/declared-failure.js';
export { BatonError, type BatonErrorCode, isBatonError } from './core/errors.js';
export type {
  BatonEvent,
  BatonEventType,
  BudgetLimit,
  RecoveryDetail,
  RecoveryEventType,
  StoredEvent,
} from './core/events.js';
export {
  FAILURE_CLASSES,
  type FailureClass,
  type OutputArtifact,
  type ResultRef,
  type StepOutcome,
  type StepUsage,
  type Verification,
} from './core/failure.js';
export type { HookFormat } from './core/hook-format.js';
export { validatePlanObject } from './core/plan/parse.js';
export type {
  AgentEnvSpec,
  AgentProfileName,
  AgentSpec,
  Budget,
  CleanupMark,
  EndStatus,
  FallbackSpec,
  ForEachItem,
  ForEachSpec,
  HookSpec,
  HookTrigger,
  ModelStepSpec,
  ModelTargetSpec,
  Plan,
  PlanInput,
  PlanLimits,
  PlanStep,
  PromptVia,
  RetryPolicy,
  RunClosing,
  SandboxMode,
  SideEffect,
  StepFlow,
  SubPlanSpec,
  ToolApprovalRule,
  ToolApprovalSpec,
  VerifyModelSpec,
  VerifySpec,
  WaitSpec,
  WaitTimeoutAction,
} from './core/plan/types.js';
export type { RunStatus, StepResult, StepStatus } from './core/run-state.js';
export type { WaitDecision } from './core/waits.js';
export type { EngineReport } from './engine/engine.js';
export type { AgentCliExecutorOptions } from './executors/agent-cli-executor.js';
export {
  type FunctionRegistry,
  type FunctionStepContext,
  StepFailure,
  type StepFunction,
} from './executors/function-executor.js';
export type { ModelExecutorOptions } from './executors/model-executor.js';
export { type AgentResult, type RunAgentOptions, runAgent } from './model-call/agent-loop.js';
export {
  type CallModelOptions,
  callModelWithRecovery,
  type ModelCallResult,
} from './model-call/call-model.js';
export type { BackoffSettings, HarnessEvent } from './model-call/call-state.js';
export { classifyModelError } from './model-call/classify-model-error.js';
export { type HarnessClock, systemClock } from './model-call/clock.js';
export { type CompactionHook, defaultCompaction } from './model-call/compaction.js';
export { createAnthropicProvider, createOpenAiProvider } from './model-call/lazy-providers.js';
export { resolveCapabilities } from './model-call/model-capabilities.js';
export { DEFAULT_PRICES, type ModelPrice } from './model-call/pricing.js';
export type { AnthropicProviderOptions } from './model-call/providers/anthropic-provider.js';
export type { OpenAiProviderOptions } from './model-call/providers/openai-provider.js';
export { RecoveryBudget, type RecoveryLimits } from './model-call/recovery-budget.js';
export { type EffectLedger, type ToolDefinition, ToolError } from './model-call/tools.js';
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
} from './model-call/types.js';
export type { BulkAnswer, BulkRun, RunsFilter } from './runtime/commands/bulk-commands.js';
export type { RerunAnswer } from './runtime/commands/rerun-commands.js';
export type { StepFileChanges } from './runtime/file-changes.js';
export type { ScheduleView } from './runtime/schedule-view.js';
export type { FilesRestored } from './runtime/workspace-restore.js';
export type { EventDelivery, SentEvent } from './store/cycle/send-event.js';
export type { RunTree, StartPlanOptions } from './workflow/baton.js';
export {
  Baton,
  type BatonOptions,
  type ForkOptions,
  type RerunOptions,
  RunNotSucceededError,
  type WatchOptions,
} from './workflow/baton.js';
export {
  type ApprovalResult,
  defineWorkflow,
  type ReconcileResult,
  type StepContext,
  type StepPolicy,
  type WaitOption,
  type WaitStepPolicy,
  Workflow,
  type WorkflowResults,
} from './workflow/define-workflow.js';
export { loadPlanFile } from './workflow/load-plan-file.js';
export { parsePlanText } from './workflow/parse-plan-text.js';
export type { ScheduleApiOptions, ScheduleControls } from './workflow/schedule-plan.js';
