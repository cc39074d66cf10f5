import type { StepUsage } from '../../core/failure.js';
import type { KeptStep } from '../../core/fork.js';
import type { Plan } from '../../core/plan/types.js';
import type { RunStatus, StepResult, StepState, StepStatus } from '../../core/run-state.js';
import type { AttemptRecord } from './attempts.js';

// The runs of the Store contract: a run stored with its plan snapshot, and read back (its summary,
// its steps, its attempts, its results). Contract suite: test/store-contract.ts ("runs").

export interface RunStore {
  /**
   * Stores a run with its plan snapshot; steps without dependencies become due after their delay.
   * Answers the run's summary as created (a worker may have claimed its first steps since).
   */
  createRun(spec: NewRun): Promise<RunSummary>;
  /** A run with every step; its `plan` (and the steps' `dependsOn`) may be shared with other runs of the same plan: read-only. */
  getRun(runId: string): Promise<RunDetail | null>;
  /**
   * A run with only the steps `selection` picks (`baton status <run>` of a large run): its summary
   * (step counts of every step), plan and workspace, and the rows of the selected steps alone, in
   * plan order. Null for an unknown run.
   */
  getRunSteps(runId: string, selection: StepSelection): Promise<RunWithSteps | null>;
  /**
   * The newest runs, at most `limit` (default 50); with `status`, `planName`, `createdFrom` or
   * `labels` (`baton status --label`), only those matching all of them.
   */
  listRuns(options?: RunListQuery): Promise<RunSummary[]>;
  getAttempts(runId: string, stepId?: string): Promise<AttemptRecord[]>;
  /** Results of succeeded steps, for templates (`{{steps.x.summary}}`). Missing or unfinished steps are absent. */
  getStepResults(runId: string, stepIds: readonly string[]): Promise<Record<string, StepResult>>;
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
  /** What the run is for (`-l team=growth`), checked by core/labels.ts. */
  labels?: Readonly<Record<string, string>>;
}

/** What `listRuns` lists: every filter optional. */
export interface RunListQuery {
  status?: RunStatus;
  limit?: number;
  planName?: string;
  /** Runs created at or after this time. */
  createdFrom?: number;
  labels?: Readonly<Record<string, string>>;
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
