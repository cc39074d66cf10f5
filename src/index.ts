/**
 * Baton's public TypeScript surface. The CLI is a thin shell over these same pieces.
 */
export { BatonError, type BatonErrorCode, isBatonError } from './core/errors.js';
export type { BatonEvent, BatonEventType, StoredEvent } from './core/events.js';
export { FAILURE_CLASSES, type FailureClass, type OutputArtifact, type StepOutcome } from './core/failure.js';
export { parsePlanText, validatePlanObject } from './core/plan/parse.js';
export type {
  AgentSpec,
  Plan,
  PlanInput,
  PlanLimits,
  PlanStep,
  PromptVia,
  RetryPolicy,
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
export type { AttemptResult, ExecutionContext, StepExecutor } from './executors/step-executor.js';
export { loadPlanFile } from './plan/load-plan-file.js';
export { SqliteStore } from './store/sqlite/sqlite-store.js';
export type { AttemptRecord, RunDetail, RunSummary, Store } from './store/store.js';
