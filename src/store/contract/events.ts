import type { BatonEvent, StoredEvent } from '../../core/events.js';
import type { Plan, PlanStep } from '../../core/plan/types.js';

// Waits and events of the Store contract: the events of a run (its history, read by the console
// and `baton status`, appended by executors while a step runs), the steps that wait for a person or
// an event, and `baton send`. Contract suites: test/store-waits-contract.ts, store-contract.ts
// ("events").

export interface EventStore {
  /**
   * `baton send`: the event ends the steps waiting for it (in `sent.runId`, else in every run), each
   * run in one transaction, exactly once under races; sent to a run whose step does not wait yet, it
   * is kept for it (the first per run and name wins). Throws for an unknown run, a finished one, or
   * (without a run) when no run waits for the event.
   */
  sendEvent(sent: SentEvent, now: number): Promise<EventDelivery[]>;
  /**
   * Appends events an executor emits while a step runs (model recovery, tool failures), in one
   * transaction. With `guard`, the run's events after `guard.afterSeq` are read in that transaction
   * (holding the run's write lock) and the append is refused with what `guard.refuse` answers: a
   * person's answer to a held tool call is recorded once, whoever answers at the same instant.
   */
  appendEvents(runId: string, events: readonly BatonEvent[], now: number, guard?: AppendGuard): Promise<void>;
  getEvents(runId: string, options?: { afterSeq?: number }): Promise<StoredEvent[]>;
  /** Events of every run after `afterSeq`, in seq order, at most `limit` (default 500): what changed since. */
  listEventsAfter(afterSeq: number, limit?: number): Promise<StoredEvent[]>;
  /** The seq of the newest event of any run (0: none): where a reader of `listEventsAfter` starts. */
  lastEventSeq(): Promise<number>;
  /**
   * Steps waiting for a person or an event (`baton check`'s WAITING lines), longest waiting first,
   * at most `limit` (default 100), from the partial index of waiting steps; `total`: how many wait.
   */
  listWaitingSteps(limit?: number): Promise<{ steps: WaitingStep[]; total: number }>;
}

/** The condition of a guarded append (see EventStore.appendEvents). */
export interface AppendGuard {
  afterSeq: number;
  /** An error that refuses the append, given the run's events after `afterSeq`; null: append. */
  refuse(later: readonly StoredEvent[]): Error | null;
}

/** An event sent by `baton send` (or `baton.send`): its name, its payload as JSON text, its run if given. */
export interface SentEvent {
  event: string;
  dataJson: string;
  /** Only this run; absent: every run with a step waiting for the event. */
  runId?: string;
  /**
   * Checks the payload against the step it goes to (its `wait.schema`), throwing a BatonError to
   * refuse it: called for every run it would reach before anything is written.
   */
  checkPayload?: (step: PlanStep, runId: string) => void;
  /**
   * The payload as stored for a run: with the secrets of that run (its plan's and the sender's)
   * masked, as every result is before it is stored. Absent: stored as given.
   */
  maskPayload?: (plan: Plan) => string;
}

/**
 * Where a sent event went in one run: to a waiting step (`stepId`), kept for a step that will wait
 * (`kept`), or dropped because an event of that name was kept for the run already (the first wins).
 */
export interface EventDelivery {
  runId: string;
  stepId: string | null;
  outcome: 'received' | 'kept' | 'dropped';
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
