import type { RandomSource } from '../core/backoff.js';
import type { BatonEvent, StoredEvent } from '../core/events.js';
import type { FailureClass, OutputArtifact, StepOutcome, StepUsage } from '../core/failure.js';
import type { FlowLimit } from '../core/flow.js';
import type { KeptStep } from '../core/fork.js';
import type { HookSpec, Plan, PlanStep } from '../core/plan/types.js';
import type { RerunRequest, RerunSelection } from '../core/rerun.js';
import type { PlanSecretEnv } from '../core/run-secrets.js';
import type { RunStatus, StepResult, StepState, StepStatus } from '../core/run-state.js';
import type { WaitDecision } from '../core/waits.js';
import type { EventDelivery, SentEvent } from './cycle/send-event.js';
import type { MetricsQuery, MetricsSnapshot } from './metrics-types.js';
import type {
  NewSchedule,
  ScheduleDetail,
  ScheduleSlot,
  ScheduleSummary,
} from './schedules/schedule-types.js';

export type { EndedAttempts, EndedUsage, MetricsQuery, MetricsSnapshot } from './metrics-types.js';
export type {
  NewSchedule,
  ScheduleDetail,
  ScheduleSlot,
  ScheduleSummary,
} from './schedules/schedule-types.js';

/**
 * The one storage contract: SQLite (sqlite/, the embedded default) and PostgreSQL (postgres/)
 * implement it and pass the same suites (test/store-contract.ts, store-flow-contract.ts,
 * store-console-contract.ts). The legacy state.json path (src/legacy) does not use a Store.
 *
 * Every method that changes state does it in ONE transaction: the events and the new
 * materialized state are written together or not at all.
 */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** Names this store among others on the machine (see store-id.ts): part of an attempt's process marker. */
  readonly id: string;
  /**
   * Stores a run with its plan snapshot; steps without dependencies become due after their delay.
   * Answers the run's summary as created (a worker may have claimed its first steps since).
   */
  createRun(spec: NewRun): Promise<RunSummary>;
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
  /** A run with every step; its `plan` (and the steps' `dependsOn`) may be shared with other runs of the same plan: read-only. */
  getRun(runId: string): Promise<RunDetail | null>;
  /**
   * A run with only the steps `selection` picks (`baton status <run>` of a large run): its summary
   * (step counts of every step), plan and workspace, and the rows of the selected steps alone, in
   * plan order. Null for an unknown run.
   */
  getRunSteps(runId: string, selection: StepSelection): Promise<RunWithSteps | null>;
  listRuns(options?: { status?: RunStatus; limit?: number }): Promise<RunSummary[]>;
  /** One page of runs, newest first, with the counts per status of every run the other filters match (`baton serve`). */
  listRunPage(query?: RunPageQuery): Promise<RunPage>;
  /** Every step blocked for a human in a run that is still going (running or blocked), newest first. */
  listBlockedSteps(limit?: number): Promise<BlockedStep[]>;
  /**
   * Steps waiting for a person or an event (`baton check`'s WAITING lines), longest waiting first,
   * at most `limit` (default 100), from the partial index of waiting steps; `total`: how many wait.
   */
  listWaitingSteps(limit?: number): Promise<{ steps: WaitingStep[]; total: number }>;
  /** Every lease held now (steps running), with its owner and process, by owner then start. */
  listLeases(): Promise<LiveLease[]>;
  /** Events of every run after `afterSeq`, in seq order, at most `limit` (default 500): what changed since. */
  listEventsAfter(afterSeq: number, limit?: number): Promise<StoredEvent[]>;
  /**
   * The figures `/metrics` exports (runtime/metrics.ts), from a few aggregate queries over indexes:
   * what they read grows with the live work and what failed, not with the history (runs per
   * status, the steps of unfinished runs, due work, leases, hook calls), plus the attempts that ended in events `query.events` (seq after
   * `afterSeq`, up to `upToSeq`), which a reader adds up from scrape to scrape.
   */
  metricsSnapshot(query: MetricsQuery): Promise<MetricsSnapshot>;
  /** The seq of the newest event of any run (0: none): where a reader of `listEventsAfter` starts. */
  lastEventSeq(): Promise<number>;
  getEvents(runId: string, options?: { afterSeq?: number }): Promise<StoredEvent[]>;
  getAttempts(runId: string, stepId?: string): Promise<AttemptRecord[]>;
  /** Results of succeeded steps, for templates (`{{steps.x.summary}}`). Missing or unfinished steps are absent. */
  getStepResults(runId: string, stepIds: readonly string[]): Promise<Record<string, StepResult>>;
  /** Human commands, each one transaction. Throws BatonError for an unknown run/step or an impossible change. */
  retryStep(runId: string, stepId: string, now: number): Promise<RunSummary>;
  skipStep(runId: string, stepId: string, now: number): Promise<RunSummary>;
  cancelRun(runId: string, now: number): Promise<RunSummary>;
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
   * `baton send`: the event ends the steps waiting for it (in `sent.runId`, else in every run), each
   * run in one transaction, exactly once under races; sent to a run whose step does not wait yet, it
   * is kept for it (the first per run and name wins). Throws for an unknown run, a finished one, or
   * (without a run) when no run waits for the event.
   */
  sendEvent(sent: SentEvent, now: number): Promise<EventDelivery[]>;
  /** Appends events an executor emits while a step runs (model recovery, tool failures), in one transaction. */
  appendEvents(runId: string, events: readonly BatonEvent[], now: number): Promise<void>;
  /**
   * Returns the effect recorded under `key`, or records an intent for it and returns null: the
   * first half of exactly-once effects (write it before the effect, `completeEffect` after).
   */
  beginEffect(key: EffectKey, now: number): Promise<EffectRecord | null>;
  completeEffect(key: EffectKey, result: unknown, now: number): Promise<void>;
  /** Forgets an intent whose effect is known not to have happened. */
  clearEffect(key: EffectKey): Promise<void>;
  /**
   * `baton gc`: deletes runs that finished (succeeded, failed, cancelled) before `before`, with their
   * steps, attempts, events and records; returns their ids, in id order. Blocked runs wait for a
   * human: kept. With `limit`, one batch in its own transaction: at most `limit` runs with ids after
   * `afterId` (pass the last id of the batch before), so memory and transactions stay bounded.
   */
  deleteFinishedRuns(before: number, options?: { dryRun?: boolean } & FinishedRunsBatch): Promise<string[]>;
  /**
   * After `baton gc`: gives the space of deleted rows back. SQLite returns the free pages to the
   * file system (incremental_vacuum, a bounded transaction at a time; a database made before
   * schema 6 keeps them for later rows); PostgreSQL leaves it to autovacuum. `full` (`baton gc
   * --vacuum`): SQLite VACUUM, which also switches an older database to auto_vacuum=INCREMENTAL;
   * PostgreSQL VACUUM of Baton's tables.
   */
  vacuum(options?: { full?: boolean }): Promise<void>;
  /** The sha256 of every result artifact a stored step still references. */
  referencedResultArtifacts(): Promise<Set<string>>;
  /** Leases up to `limit` hook calls that are due (each owed once per event, see hook_deliveries). */
  claimHookDeliveries(owner: string, now: number, leaseMs: number, limit: number): Promise<HookDelivery[]>;
  /** Records a hook call's result: done, due again at `retryAt`, or failed for good (`retryAt` null). */
  finishHookDelivery(
    key: HookDeliveryKey,
    result: { ok: true } | { ok: false; error: string; retryAt: number | null },
    now: number,
  ): Promise<void>;
  /** `baton flow set`: sets (or replaces) the limit of a flow key; every worker obeys it from its next claim. */
  setFlowLimit(limit: FlowLimit, now: number): Promise<void>;
  /** `baton flow rm`: removes a key's limit; false when it had none. */
  removeFlowLimit(key: string): Promise<boolean>;
  /** Every flow limit, with the attempts running under its key and its starts in the current window. */
  listFlowLimits(now: number): Promise<FlowLimitStatus[]>;
  /**
   * Sleeps until other processes make work due (a notification) or until `untilMs` (ms since the
   * epoch; Infinity: no timer of the caller's), whichever comes first; resolves at once when `signal`
   * aborts. Never rejects: a store that lost its notifications falls back to a slow poll of its own,
   * which also caps the wait. Only stores that can notify have it; the engine polls the others.
   */
  waitForWork?(untilMs: number, signal: AbortSignal): Promise<void>;
  /**
   * Schedules (core/schedule/). Their due slots are ticked by `cycle` (a cycle of every run, not
   * one driven run), in its transaction: each slot is decided once, however many processes cycle.
   * `addSchedule` throws SCHEDULE_EXISTS for a name in use; the others SCHEDULE_NOT_FOUND for an
   * unknown one.
   */
  addSchedule(spec: NewSchedule): Promise<ScheduleSummary>;
  /** `baton schedule update`: a new plan snapshot and rules; slots already decided stay decided. */
  replaceSchedule(spec: NewSchedule): Promise<ScheduleSummary>;
  getSchedule(name: string): Promise<ScheduleDetail | null>;
  /** Every schedule, by name. */
  listSchedules(): Promise<ScheduleSummary[]>;
  /** A paused schedule decides no slot; resumed, it goes on from the first slot after `now`. */
  pauseSchedule(name: string, now: number): Promise<ScheduleSummary>;
  resumeSchedule(name: string, now: number): Promise<ScheduleSummary>;
  /** Removes a schedule and its slot history (its runs stay); false when there was none. */
  removeSchedule(name: string): Promise<boolean>;
  /** Starts a run of the schedule now (`<name>-<time>-manual`), whatever its timing and overlap. */
  triggerSchedule(name: string, now: number): Promise<RunSummary>;
  /** A schedule's slot history, newest slot first, at most `limit` (default 20). */
  listScheduleSlots(name: string, limit?: number): Promise<ScheduleSlot[]>;
  /** The slot that started a run (`baton status` names it); null for a run no schedule started. */
  scheduleSlotOfRun(runId: string): Promise<ScheduleSlot | null>;
  close(): Promise<void>;
}

/** Filters of `listRunPage`; every one optional. Times are ms since the epoch. */
/** One batch of `deleteFinishedRuns`. */
export interface FinishedRunsBatch {
  /** At most this many runs (default: all). */
  limit?: number;
  /** Only runs whose id sorts after this one (default: from the first). */
  afterId?: string;
}

export interface RunPageQuery {
  status?: RunStatus;
  /** The plan's name, exactly. */
  planName?: string;
  /** Runs created at or after this time. */
  createdFrom?: number;
  /** Runs created before this time. */
  createdBefore?: number;
  /** A part of the run id (any position, case-sensitive). */
  idContains?: string;
  /** Runs skipped, for pages after the first. Default 0. */
  offset?: number;
  /** Runs in the page. Default 50. */
  limit?: number;
}

export interface RunPage {
  runs: RunSummary[];
  /** Runs matching every filter but `status`, per status (absent: none). */
  counts: Partial<Record<RunStatus, number>>;
  /** Runs matching every filter, `status` included: for the page numbers. */
  total: number;
}

/** A step waiting for a human (`listBlockedSteps`). */
export interface BlockedStep {
  runId: string;
  planName: string;
  runStatus: RunStatus;
  stepId: string;
  attempt: number;
  failureClass: FailureClass | null;
  reason: string | null;
  /** When the step was blocked (its last change). */
  blockedAt: number;
}

/** A step waiting for a person or an event (`listWaitingSteps`). */
export interface WaitingStep {
  runId: string;
  planName: string;
  stepId: string;
  /** What it waits for: its event's name, or its approval's prompt. */
  waitingFor: string;
  /** When its timeout fires; null: never. */
  timeoutAt: number | null;
  /** When it started waiting. */
  since: number;
}

/** A lease a worker holds now (`listLeases`). */
export interface LiveLease extends AttemptKey {
  planName: string;
  owner: string;
  leaseExpiresAt: number;
  startedAt: number | null;
  /** The OS process running the attempt, once the worker noted it. */
  pid: number | null;
  host: string | null;
  flowKey: string | null;
}

export interface FlowLimitStatus extends FlowLimit {
  /** Attempts under the key running now, across all workers. */
  running: number;
  /** Starts that count against the rate now (0 without a rate). */
  recentStarts: number;
  updatedAt: number;
}

export interface NewRun {
  id: string;
  plan: Plan;
  planHash: string;
  inputs: Record<string, string>;
  /** Absolute path of the directory the agents work in. */
  workspace: string;
  now: number;
  /** Store it proposed: nothing runs until `approveRun` (`baton propose` / `baton approve`). */
  awaitingApproval?: boolean;
  /** Steps already done elsewhere (`baton import` of a half-done state.json): they start succeeded. */
  completedSteps?: readonly string[];
  /** `baton fork`: steps that start settled with the old run's status and result (core/fork.ts). */
  keptSteps?: readonly KeptStep[];
}

export interface EffectKey {
  runId: string;
  stepId: string;
  key: string;
}

/** An effect as recorded: only the intent (outcome unknown), or done with its result. */
export type EffectRecord = { state: 'intent' } | { state: 'done'; result: unknown };

export interface HookDeliveryKey {
  runId: string;
  eventSeq: number;
  /** Index of the hook in the plan's `hooks`. */
  hook: number;
}

/** A hook call owed for one event. */
export interface HookDelivery extends HookDeliveryKey {
  /** Calls already made (and failed). */
  attempts: number;
  spec: HookSpec;
  event: StoredEvent;
  planName: string;
  runStatus: RunStatus;
  blockedReason: string | null;
  /** The secret variables the run's plan names: withheld from a hook command, masked in its error. */
  secretEnv?: PlanSecretEnv;
}

export interface RunFilter {
  runId?: string;
}

export interface AttemptKey {
  runId: string;
  stepId: string;
  attempt: number;
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
  /** Runs the cycle's tick started from schedule slots (absent: none). */
  slotRunsStarted?: number;
  /**
   * Schedules due by the request's `dueBy` were left due: their runs would pass its `slotRunsLeft`
   * (the check's bound). The next check starts them.
   */
  slotsLeft?: boolean;
}

export interface RunSummary {
  id: string;
  planName: string;
  status: RunStatus;
  blockedReason: string | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  attemptsTotal: number;
  /** Tokens and cost reported by the run's attempts. */
  usage: StepUsage;
  stepCounts: Partial<Record<StepState['status'], number>>;
}

/** A run after `rerunFrom`, with the steps it runs again and those it left stale (`only`). */
export type RerunSummary = RunSummary & { rerun: RerunSelection };

/** A step of a run as the reads return it: its state, with its title and dependencies from the plan. */
export type RunStep = StepState & { title: string; dependsOn: string[] };

/** Which steps `getRunSteps` returns. */
export interface StepSelection {
  /** The steps in these states... */
  statuses: readonly StepStatus[];
  /** ...or every step, when the run has at most this many. */
  everyStepUpTo: number;
}

/** No step: `getRunSteps` answers the run's summary (status, counts) without reading a step row. */
export const NO_STEPS: StepSelection = { statuses: [], everyStepUpTo: 0 };

/** A run with some of its steps (`Store.getRunSteps`), or all of them (`RunDetail`). */
export interface RunWithSteps extends RunSummary {
  plan: Plan;
  workspace: string;
  /** In plan order. */
  steps: RunStep[];
}

export interface RunDetail extends RunWithSteps {
  planHash: string;
  inputs: Record<string, string>;
  /** Every step of the plan, in its order. */
  steps: RunStep[];
}

export interface AttemptRecord extends AttemptKey {
  owner: string | null;
  startedAt: number | null;
  endedAt: number | null;
  outcome: 'succeeded' | 'failed' | 'interrupted' | 'discarded';
  failureClass: FailureClass | null;
  exitCode: number | null;
  fingerprint: string | null;
  message: string | null;
  summary: string | null;
  logPath: string | null;
  outputs: OutputArtifact[];
  usage: StepUsage | null;
}
