import type { BatonEvent, StoredEvent } from '../core/events.js';
import type { StepOutcome } from '../core/failure.js';
import type { StepResult } from '../core/run-state.js';
import type { EffectLedger } from '../model-call/tools.js';
import type { ClaimedStep } from '../store/store.js';

/** What an executor is given for one attempt. */
export interface ExecutionContext {
  claim: ClaimedStep;
  /** Results of the steps the instruction references, for templates. */
  results: Record<string, StepResult>;
  /** Baton's home folder (`.baton`): attempt logs go under `runs/` in it. */
  home: string;
  /** Which store the run is in (Store.id): agents get it as BATON_STORE_ID, part of their marker. */
  storeId: string;
  /** Aborted when the lease is lost, the run is cancelled or the worker stops. */
  signal: AbortSignal;
  /**
   * Says the attempt is alive (a function's `ctx.heartbeat()`): a function step with
   * `heartbeatTimeoutMs` is stopped after that long without one. Cheap: call it as often as you like.
   */
  heartbeat(): void;
  /** Called with the OS process id of an agent, so an orphan can be stopped after a crash. */
  onProcess(pid: number): void;
  /** Appends events to the run's log while the attempt runs (model recovery, tool failures). */
  recordEvents(events: readonly BatonEvent[]): Promise<void>;
  /** The run's events after `afterSeq` (a person's answer to a tool approval); absent: none read. */
  readEvents?(afterSeq: number): Promise<StoredEvent[]>;
  /** This step's records in the store's effect table: a write recorded here never runs twice. */
  effects: EffectLedger;
}

export interface AttemptResult {
  outcome: StepOutcome;
  /** Attempt log relative to `home`, when the executor wrote one. */
  logPath: string | null;
}

/** Runs one attempt of a step. Never throws for a failed step: the failure is in the outcome. */
export interface StepExecutor {
  execute(context: ExecutionContext): Promise<AttemptResult>;
  /** For function executors: the names this process can run; the engine claims no other function step. */
  functionNames?(): readonly string[];
}

/** Where attempt logs live, relative to the home folder. */
export function attemptLogPath(claim: Pick<ClaimedStep, 'runId' | 'stepId' | 'attempt'>): string {
  return `runs/${claim.runId}/${claim.stepId}/attempt-${claim.attempt}.log`;
}
