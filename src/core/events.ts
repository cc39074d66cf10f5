import type { FailureClass } from './failure.js';
import type { RunStatus } from './run-state.js';

/**
 * The append-only log of a run: persisted, shown by `baton timeline`, read by hooks and the console
 * (`baton serve`).
 * Each event is written in the same transaction as the state it describes.
 */
export type BatonEvent =
  /** A run was stored with its plan snapshot; `forkedFrom`: the run and step `baton fork` made it from. */
  | {
      type: 'run.created';
      planName: string;
      planHash: string;
      steps: number;
      status: RunStatus;
      forkedFrom?: { runId: string; stepId: string };
    }
  /** A human approved a proposed run, or retried a step of a blocked run: work goes on. */
  | { type: 'run.resumed'; reason: string }
  /** Every step succeeded, was skipped or degraded. */
  | { type: 'run.succeeded' }
  /** Nothing more can happen without a human; `reason` names the step(s) and what to do. */
  | { type: 'run.blocked'; reason: string }
  | { type: 'run.cancelled' }
  /** The run gave up (`onFailure: compensate`): a step was blocked for good; its cleanup ran. */
  | { type: 'run.failed'; reason: string }
  /** The run ended as `ending` and runs its cleanup steps (compensations, `finally:`) first. */
  | { type: 'run.cleanup_started'; ending: 'succeeded' | 'failed' | 'cancelled'; steps: number }
  /** A human approved a proposed run (`baton approve`); `delayMs` was added between dependent steps. */
  | { type: 'run.approved'; delayMs: number }
  /** A human rejected a proposed run (`baton reject`). */
  | { type: 'run.rejected' }
  /**
   * A person asked for `stepId` to run again (`baton rerun --from`), with `steps` steps in all (it
   * and its dependents, or it alone with `only`); `stale`: the steps after it that keep a result
   * resting on an older one (`only`); `redoEffects`: its recorded effects are forgotten.
   */
  | {
      type: 'run.rerun_requested';
      stepId: string;
      by: string;
      only: boolean;
      redoEffects: boolean;
      steps: number;
      stale?: string[];
      /** Steps after the rerun point kept as they were (`--keep`, `--keep-effects`). */
      kept?: string[];
    }
  /** A worker claimed the step and leased it until `leaseExpiresAt`. */
  | { type: 'step.started'; stepId: string; attempt: number; owner: string; leaseExpiresAt: number }
  | { type: 'step.succeeded'; stepId: string; attempt: number; durationMs: number | null; summary: string }
  | {
      type: 'step.failed';
      stepId: string;
      attempt: number;
      durationMs: number | null;
      failureClass: FailureClass;
      message: string;
      exitCode: number | null;
      fingerprint: string;
    }
  | { type: 'step.retry_scheduled'; stepId: string; nextAttempt: number; delayMs: number; dueAt: number }
  /** The step's retries are used up (or its budget reached): its fallback runs next. */
  | { type: 'step.fallback'; stepId: string; reason: string }
  /** The step was finished another way (its fallback, a fallback model): the run goes on. */
  | {
      type: 'step.degraded';
      stepId: string;
      attempt: number;
      durationMs: number | null;
      summary: string;
      reason: string;
    }
  | { type: 'step.blocked'; stepId: string; failureClass: FailureClass; reason: string }
  /** A human asked for the step to run again (`baton retry`). */
  | { type: 'step.retry_requested'; stepId: string }
  /**
   * The step was skipped: by a human (`baton skip`), or with `reason` (its `when` was false:
   * `when <expression> was false`; a rejection before it; a wait's timeout).
   */
  | { type: 'step.skipped'; stepId: string; reason?: string }
  /** A fan-out (`forEach`) expanded into `items` item steps `<stepId>[i]`, in the same transaction. */
  | { type: 'step.expanded'; stepId: string; items: number }
  /**
   * A wait step started waiting, holding no lease: for `approval` (`waitingFor`: its prompt) or an
   * `event` (`waitingFor`: its name); `timeoutAt`: when its timeout fires (null: never).
   */
  | {
      type: 'step.waiting';
      stepId: string;
      for: 'approval' | 'event';
      waitingFor: string;
      timeoutAt: number | null;
    }
  /** A person approved a waiting step (`baton approve <run> <step>`). */
  | { type: 'step.approved'; stepId: string; by: string; comment: string | null }
  /** A person rejected a waiting step (`baton reject <run> <step>`), or its timeout did (`by`: timeout). */
  | { type: 'step.rejected'; stepId: string; by: string; comment: string | null }
  /**
   * The running agent asked to use a tool a rule of `agent.approve` names: it waits, in its session,
   * for `baton approve|reject <run> <step> --tool <callId>`. `digest`: sha256 of the tool's input as
   * JSON; `summary`: its command or path (masked, cut); `timeoutAt`: when it is denied unanswered.
   */
  | {
      type: 'step.tool_approval_requested';
      stepId: string;
      attempt: number;
      callId: string;
      tool: string;
      digest: string;
      summary: string;
      timeoutAt: number;
    }
  /** A tool call waiting for approval was answered: by a person, or denied by `timeout`. */
  | {
      type: 'step.tool_approval_decided';
      stepId: string;
      attempt: number;
      callId: string;
      tool: string;
      digest: string;
      decision: 'allow' | 'deny';
      by: string;
      comment: string | null;
    }
  /** The event a step waited for arrived (`baton send`); `kept`: it was sent before the step waited. */
  | { type: 'event.received'; stepId: string; event: string; kept: boolean }
  /** A waiting step's timeout fired; `action`: its onTimeout (block, skip or reject). */
  | { type: 'step.wait_timed_out'; stepId: string; action: 'block' | 'skip' | 'reject' }
  /**
   * A shadow run did not execute this step (it has a side effect): what it would have run, fully
   * rendered, and the result passed on instead. With `effect`: the step ran, but its `ctx.effect`
   * of that key was not performed, and `result` (the step's `shadowResult`, else null) was returned
   * in its place.
   */
  | {
      type: 'step.would_execute';
      stepId: string;
      attempt: number;
      executor: string;
      inputs: Record<string, unknown>;
      result: unknown;
      effect?: string;
    }
  /** A step reported progress (`ctx.heartbeat()`). */
  | { type: 'step.heartbeat'; stepId: string; attempt: number; note: string }
  /**
   * An agent printed nothing and changed no file for half its `agent.stallTimeoutMs`, or a function
   * called no `ctx.heartbeat()` for half its `heartbeatTimeoutMs` (then `stallTimeoutMs` is that).
   */
  | { type: 'step.stalling'; stepId: string; attempt: number; silentMs: number; stallTimeoutMs: number }
  /**
   * The agent CLI's own session of an attempt (`agent.resume`): `resumed` when it continued the
   * session of the attempt before, else started `sessionId` fresh; `reason`: why it did not resume
   * when it meant to (the CLI found no such session).
   */
  | {
      type: 'step.session';
      stepId: string;
      attempt: number;
      sessionId: string;
      resumed: boolean;
      reason?: string;
    }
  /**
   * The run's workspace was recorded (`checkpoint: workspace`) as git tree `tree` in the home's
   * private checkpoint store: `before` an attempt of an agent step starts, `after` it ended.
   */
  | { type: 'step.checkpoint'; stepId: string; attempt: number; phase: 'before' | 'after'; tree: string }
  /**
   * The workspace was put back as it was before `stepId` (tree `tree`), by `baton rerun --from`,
   * `fork --from` or `rollback` (`cause`), asked by `by`; `previous`: the tree it held before (a
   * fork's fresh copy has none).
   */
  | {
      type: 'run.files_restored';
      stepId: string;
      tree: string;
      previous?: string;
      cause: 'rerun' | 'rollback' | 'fork';
      by: string;
    }
  /** A human supplied the outcome of a blocked step (`baton resolve`). */
  | { type: 'step.resolved'; stepId: string }
  | { type: 'step.cancelled'; stepId: string }
  /** A guardrail stopped the run. */
  | { type: 'budget.exceeded'; limit: BudgetLimit; value: number; max: number; stepId?: string }
  /** The model-call harness acted on a failed or untrustworthy response (redacted: no prompt or completion). */
  | ({ type: RecoveryEventType } & RecoveryDetail)
  /** A model call ended: answered after recovering, answered in a degraded way, or failed. */
  | {
      type: 'recovery.finished';
      stepId?: string;
      callId: string;
      provider: string;
      model: string;
      outcome: 'ok' | 'recovered' | 'degraded' | 'failed';
      requests: number;
      failureClass?: FailureClass;
      reason?: string;
    }
  /** A tool call was refused or failed; the model was told (`Error[code]: ...`). */
  | { type: 'tool.failed'; stepId?: string; tool: string; code: string; fingerprint: string; message: string }
  /** A write tool's recorded result was returned instead of running it again. */
  | { type: 'tool.replayed'; stepId?: string; tool: string; key: string };

/** One recovery action of the model-call harness, as a `recovery.*` event. */
export type RecoveryEventType =
  | 'recovery.retried'
  | 'recovery.compacted'
  | 'recovery.output_reduced'
  | 'recovery.reissued'
  | 'recovery.continued'
  | 'recovery.fell_back'
  | 'recovery.gave_up';

/** What a recovery event records. Messages are redacted and cut to 300 characters. */
export interface RecoveryDetail {
  stepId?: string;
  callId: string;
  provider: string;
  model: string;
  /** The request number within the call, from 1. */
  attempt: number;
  failureClass?: FailureClass;
  reason?: string;
  status?: number;
  code?: string;
  waitMs?: number;
  tokensBefore?: number;
  tokensAfter?: number;
  maxOutputBefore?: number;
  maxOutputAfter?: number;
  toProvider?: string;
  toModel?: string;
  message?: string;
}

export type BatonEventType = BatonEvent['type'];

/** The guardrails a run or step can run into. */
export type BudgetLimit = 'maxSteps' | 'maxWallMs' | 'maxTokens' | 'maxCostUsd';

/** An event as stored: with its run, position and time. */
export type StoredEvent = BatonEvent & { seq: number; runId: string; at: number };
