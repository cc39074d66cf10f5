import type { FailureClass } from '../../core/failure.js';
import type { Plan } from '../../core/plan/types.js';
import type { RunStatus } from '../../core/run-state.js';
import type { AttemptKey } from './attempts.js';
import type { RunSummary } from './runs.js';

// The reads across runs of the Store contract: what the console (`baton serve`) shows of every run
// at once (the runs page, the blockers inbox, the workers page). Contract suite:
// test/store-console-contract.ts.

export interface OverviewStore {
  /** One page of runs, newest first, with the counts per status of every run the other filters match (`baton serve`). */
  listRunPage(query?: RunPageQuery): Promise<RunPage>;
  /**
   * Every step blocked for a human in a run that is still going (running or blocked), newest first;
   * with `filter`, only those matching all of it (`baton retry --blocked`).
   */
  listBlockedSteps(limit?: number, filter?: BlockedStepFilter): Promise<BlockedStep[]>;
  /** Runs matching every filter, oldest first, at most `limit` (`baton cancel` with filters). */
  selectRuns(query: RunSelectQuery): Promise<RunRef[]>;
  /** The plan snapshots of these runs (a run not found: absent), e.g. to mask many rows at once. */
  getRunPlans(runIds: readonly string[]): Promise<Record<string, Plan>>;
  /** The labels of these runs (a run without any: absent). */
  getRunLabels(runIds: readonly string[]): Promise<Record<string, Record<string, string>>>;
  /** Every lease held now (steps running), with its owner and process, by owner then start. */
  listLeases(): Promise<LiveLease[]>;
}

/** Filters of `listRunPage`; every one optional. Times are ms since the epoch. */
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
  /** Runs carrying every one of these labels (`--label team=growth`). */
  labels?: Readonly<Record<string, string>>;
  /** Runs skipped, for pages after the first. Default 0. */
  offset?: number;
  /** Runs in the page. Default 50. */
  limit?: number;
}

/** What `listBlockedSteps` keeps; every filter optional. */
export interface BlockedStepFilter {
  failureClass?: FailureClass;
  /** Steps blocked at or after this time. */
  blockedFrom?: number;
  planName?: string;
  labels?: Readonly<Record<string, string>>;
}

/** Filters of `selectRuns`: `statuses` and `limit` required, the rest optional. */
export interface RunSelectQuery {
  statuses: readonly RunStatus[];
  planName?: string;
  /** Runs created at or after this time. */
  createdFrom?: number;
  labels?: Readonly<Record<string, string>>;
  limit: number;
}

/** A run `selectRuns` found. */
export interface RunRef {
  id: string;
  planName: string;
  status: RunStatus;
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
