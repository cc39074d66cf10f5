import type { RandomSource } from '../../core/backoff.js';
import type { FailureClass, StepOutcome } from '../../core/failure.js';
import type { PlanStep } from '../../core/plan/types.js';
import type { PlanSecretEnv } from '../../core/run-secrets.js';
import type { StepResult } from '../../core/run-state.js';
import type { AttemptKey } from './attempts.js';

// The worker protocol of the Store contract: a cycle commits finished attempts, reclaims expired
// leases and claims due steps; leases are renewed while attempts run; an idle worker learns when
// to look again. Contract suites: test/store-contract.ts ("claims"), store-flow-contract.ts,
// store-when-contract.ts, store-for-each-contract.ts.

export interface ClaimStore {
  /**
   * One worker round trip: commit finished attempts, reclaim expired leases, claim due steps.
   * Committing and claiming together is the group commit: many runs' transitions share one fsync,
   * and a successor is claimed in the same transaction that made it due.
   */
  cycle(request: CycleRequest): Promise<CycleResult>;
  /** Extends the leases `owner` still holds; returns the attempts whose lease was lost (cancelled, reclaimed). */
  renewLeases(
    owner: string,
    attempts: readonly AttemptKey[],
    leaseMs: number,
    now: number,
  ): Promise<AttemptKey[]>;
  /** Notes the OS process running an attempt so that whoever reclaims its lease can stop an orphan. */
  recordAttemptProcess(key: AttemptKey, proc: { pid: number; host: string }): Promise<void>;
  /** The earliest time anything becomes due, a lease runs out or a schedule fires (without a run filter); null when nothing is pending. */
  nextWakeAt(filter?: RunFilter): Promise<number | null>;
  /**
   * Sleeps until other processes make work due (a notification) or until `untilMs` (ms since the
   * epoch; Infinity: no timer of the caller's), whichever comes first; resolves at once when `signal`
   * aborts. Never rejects: a store that lost its notifications falls back to a slow poll of its own,
   * which also caps the wait. Only stores that can notify have it; the engine polls the others.
   * `since` (ms since the epoch): the caller looked at the store at that time, so work announced
   * before it does not end the wait at once. A worker's cycle marks that itself; a reader that does
   * not claim (`Baton.watch`) passes the time of its last look, or it would be woken at once again
   * by a notification it has already seen.
   */
  waitForWork?(untilMs: number, signal: AbortSignal, since?: number): Promise<void>;
}

export interface RunFilter {
  runId?: string;
}

export interface Completion extends AttemptKey {
  owner: string;
  outcome: StepOutcome;
  startedAt: number;
  endedAt: number;
  /** Attempt log, relative to the Baton home directory. */
  logPath: string | null;
}

export interface CycleRequest extends RunFilter {
  owner: string;
  now: number;
  leaseMs: number;
  completions: readonly Completion[];
  /** How many due steps to claim at most (free worker slots). */
  claimLimit: number;
  /** Function steps this process can run; undefined: all. Others are left for a process that can. */
  functions?: readonly string[];
  random: RandomSource;
  /**
   * A check's start (`baton check`, the engine's drain): the cycle takes the work due by then and
   * what that work made due without a timer, and decides schedule slots up to then only
   * (core/check-horizon.ts). Undefined: everything due at `now` (a worker, `baton run`).
   */
  dueBy?: number;
  /**
   * Runs the check may still start from schedule slots (SLOT_RUNS_PER_CHECK, less those started);
   * undefined: no bound but the cycle's own (SLOT_RUNS_PER_CYCLE). 0: the cycle ticks no schedule.
   */
  slotRunsLeft?: number;
}

export interface ClaimedStep extends AttemptKey {
  owner: string;
  leaseExpiresAt: number;
  step: PlanStep;
  planName: string;
  inputs: Record<string, string>;
  workspace: string;
  /** The previous attempt's error, for the troubleshoot prompt. */
  lastError: string | null;
  /** The previous attempt's failure class (absent: none failed), for resuming the agent's session. */
  lastFailureClass?: FailureClass;
  /** The secret variables the run's plan names (planSecretEnv): withheld from its agent, masked in what it records. */
  secretEnv?: PlanSecretEnv;
  /** This attempt runs the step's fallback (`step` is the fallback's executor): success is degraded. */
  fallback?: boolean;
  /** The run is a shadow run: a step with a side effect is recorded, not executed. */
  shadow?: boolean;
  /** When the step's first attempt started (for its span and its wall-clock budget). */
  firstStartedAt?: number;
  /**
   * Results of the steps this attempt reads (see stepReads), as stored when it was claimed: both
   * stores hold the run in memory while they claim, so they attach them from there.
   */
  results: Record<string, StepResult>;
}

export interface ReclaimedAttempt extends AttemptKey {
  pid: number | null;
  host: string | null;
}

export interface CycleResult {
  claimed: ClaimedStep[];
  /** Per completion, in order: false when the lease had been lost and the outcome was discarded. */
  accepted: boolean[];
  reclaimed: ReclaimedAttempt[];
  /** The cycle wrote hook calls (its events matched a plan's hooks): the engine delivers them now. */
  hooksOwed?: boolean;
  /**
   * The cycle moved a due step without claiming it: skipped it (its `when` was false), expanded a
   * fan-out, started a wait or fired its timeout. What that released may be due now, so the engine
   * looks again at once (a `check` does not end on it).
   */
  settledUnclaimed?: boolean;
  /** Runs the cycle's transitions ended (succeeded, failed, cancelled; absent: none): a parent waiting on one looks now. */
  endedRuns?: string[];
  /** Runs the cycle's tick started from schedule slots (absent: none). */
  slotRunsStarted?: number;
  /**
   * Schedules due by the request's `dueBy` were left due: their runs would pass its `slotRunsLeft`
   * (the check's bound). The next check starts them.
   */
  slotsLeft?: boolean;
}
