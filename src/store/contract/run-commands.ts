import type { FailureClass } from '../../core/failure.js';
import type { RerunRequest, RerunSelection } from '../../core/rerun.js';
import type { CancelOptions } from '../../core/run-commands.js';
import type { StepResult } from '../../core/run-state.js';
import type { WaitDecision } from '../../core/waits.js';
import type { RunSummary } from './runs.js';

// The human commands of the Store contract, each one transaction (store/cycle/human-commands.ts
// writes them once for both dialects). Contract suites: test/store-contract.ts ("commands"),
// store-rerun-contract.ts, store-waits-contract.ts (approve and reject a step).

export interface RunCommands {
  /** Human commands, each one transaction. Throws BatonError for an unknown run/step or an impossible change. */
  retryStep(runId: string, stepId: string, now: number): Promise<RunSummary>;
  skipStep(runId: string, stepId: string, now: number): Promise<RunSummary>;
  /** Cancels a run; with cleanup to do (compensations, `finally:`) it runs it first (core/cleanup.ts). */
  cancelRun(runId: string, now: number, options?: CancelOptions): Promise<RunSummary>;
  /** Starts a run stored with `awaitingApproval`; `delayMs` becomes the minimum wait before each dependent step. */
  approveRun(runId: string, now: number, delayMs?: number): Promise<RunSummary>;
  rejectRun(runId: string, now: number): Promise<RunSummary>;
  /** `baton resolve`: a human supplies the result of a blocked step, which succeeds with it. */
  resolveStep(runId: string, stepId: string, result: StepResult, now: number): Promise<RunSummary>;
  /** Gives a run stopped by its maxSteps budget as many attempts again. */
  resumeRun(runId: string, now: number): Promise<RunSummary>;
  /** `baton approve <run> <step>`: a waiting approval succeeds with `{ approved: true, by, comment, at }`. */
  approveStep(runId: string, stepId: string, decision: WaitDecision, now: number): Promise<RunSummary>;
  /** `baton reject <run> <step>`: a waiting approval is rejected; the steps after it are skipped. */
  rejectStep(runId: string, stepId: string, decision: WaitDecision, now: number): Promise<RunSummary>;
  /**
   * `baton rerun <run> --from <step>`: the step and the steps that depend on it run again with fresh
   * tries (core/rerun.ts), recorded as `run.rerun_requested`; with `redoEffects` their recorded
   * effects are forgotten in the same transaction. Refuses a cancelled run, a step that has not run,
   * an unsafe step without `redoEffects`.
   */
  rerunFrom(runId: string, request: RerunRequest, now: number): Promise<RerunSummary>;
  /**
   * `baton retry --blocked`: the named blocked steps of many runs retried, each run as `retryStep`
   * would, in transactions of up to BULK_RUNS runs (one statement each on PostgreSQL). A run the
   * change refuses (it ended, moved on, is stopped by its budget) is answered with why; the others
   * are written.
   */
  retryRunSteps(targets: readonly BulkRetryTarget[], now: number): Promise<BulkOutcome[]>;
  /** `baton cancel` with filters: many runs cancelled, each as `cancelRun` would, as retryRunSteps does. */
  cancelRuns(runIds: readonly string[], now: number, options?: CancelOptions): Promise<BulkOutcome[]>;
}

/**
 * The blocked steps of one run a bulk retry retries, each only while still blocked (with this
 * class, when given) as it was listed.
 */
export interface BulkRetryTarget {
  runId: string;
  stepIds: readonly string[];
  failureClass?: FailureClass;
}

/** Runs one bulk transaction writes at most. */
export const BULK_RUNS = 500;

/** What a bulk command did to one run: its summary after it, or why it was refused. */
export type BulkOutcome = { runId: string; summary: RunSummary } | { runId: string; refused: string };

/** A run after `rerunFrom`, with the steps it runs again and those it left stale (`only`). */
export type RerunSummary = RunSummary & { rerun: RerunSelection };
