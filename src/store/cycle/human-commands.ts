import '../core-libraries.js';
import { isBatonError } from '../../core/errors.js';
import { type RerunRequest, type RerunSelection, rerunFrom } from '../../core/rerun.js';
import {
  approveRun,
  type CancelOptions,
  cancelRun,
  rejectRun,
  resolveStep,
  resumeRun,
  retryStep,
  retrySteps,
  skipStep,
} from '../../core/run-commands.js';
import type { RunState, StepResult } from '../../core/run-state.js';
import type { Transition } from '../../core/transitions.js';
import { approveWaitStep, rejectWaitStep, type WaitDecision } from '../../core/waits.js';
import {
  BULK_RUNS,
  type BulkOutcome,
  type BulkRetryTarget,
  type RerunSummary,
  type RunCommands,
} from '../contract/run-commands.js';
import type { RunSummary } from '../contract/runs.js';

/** What a human command does to a run, as the core decides it (core/run-commands.ts). */
export type RunChange = (run: RunState) => Transition;

// biome-ignore lint/suspicious/noExplicitAny: a mixin's base must be constructible with any[] (TS2545).
type StoreBase = abstract new (...args: any[]) => object;

/**
 * The human commands, once for both dialects, over `applyCommand`: the dialect's half, which loads
 * the run under its write lock, applies the change and writes the transition in ONE transaction.
 */
export function withHumanCommands<B extends StoreBase>(Base: B) {
  abstract class WithHumanCommands extends Base implements RunCommands {
    /**
     * In one transaction: the run as stored now (throws runNotFound when there is none), `change`
     * applied to it, its events and new state written. Returns the run's summary after it.
     */
    abstract applyCommand(runId: string, change: RunChange, now: number): Promise<RunSummary>;

    /**
     * In one transaction: each run as stored now, its change applied and written; a run that is
     * gone, or whose change throws a BatonError, is answered `refused` and left as it is.
     */
    abstract applyCommands(
      changes: readonly { runId: string; change: RunChange }[],
      now: number,
    ): Promise<BulkOutcome[]>;

    async retryRunSteps(targets: readonly BulkRetryTarget[], now: number): Promise<BulkOutcome[]> {
      return applyInChunks(
        this,
        targets.map(({ runId, stepIds, failureClass }) => ({
          runId,
          change: (run: RunState) => retrySteps(run, stepIds, now, failureClass),
        })),
        now,
      );
    }

    cancelRuns(runIds: readonly string[], now: number, options?: CancelOptions): Promise<BulkOutcome[]> {
      return applyInChunks(
        this,
        runIds.map((runId) => ({ runId, change: (run: RunState) => cancelRun(run, now, options) })),
        now,
      );
    }

    retryStep(runId: string, stepId: string, now: number): Promise<RunSummary> {
      return this.applyCommand(runId, (run) => retryStep(run, stepId, now), now);
    }

    skipStep(runId: string, stepId: string, now: number): Promise<RunSummary> {
      return this.applyCommand(runId, (run) => skipStep(run, stepId, now), now);
    }

    cancelRun(runId: string, now: number, options?: CancelOptions): Promise<RunSummary> {
      return this.applyCommand(runId, (run) => cancelRun(run, now, options), now);
    }

    approveRun(runId: string, now: number, delayMs = 0): Promise<RunSummary> {
      return this.applyCommand(runId, (run) => approveRun(run, now, delayMs), now);
    }

    rejectRun(runId: string, now: number): Promise<RunSummary> {
      return this.applyCommand(runId, (run) => rejectRun(run, now), now);
    }

    resolveStep(runId: string, stepId: string, result: StepResult, now: number): Promise<RunSummary> {
      const json = JSON.stringify(result);
      return this.applyCommand(runId, (run) => resolveStep(run, stepId, json, now), now);
    }

    resumeRun(runId: string, now: number): Promise<RunSummary> {
      return this.applyCommand(runId, (run) => resumeRun(run, now), now);
    }

    approveStep(runId: string, stepId: string, decision: WaitDecision, now: number): Promise<RunSummary> {
      return this.applyCommand(runId, (run) => approveWaitStep(run, stepId, decision, now), now);
    }

    rejectStep(runId: string, stepId: string, decision: WaitDecision, now: number): Promise<RunSummary> {
      return this.applyCommand(runId, (run) => rejectWaitStep(run, stepId, decision, now), now);
    }

    async rerunFrom(runId: string, request: RerunRequest, now: number): Promise<RerunSummary> {
      let rerun: RerunSelection = { steps: [], stale: [], kept: [], effects: [] };
      const summary = await this.applyCommand(
        runId,
        (run) => {
          const transition = rerunFrom(run, request, now);
          rerun = transition.selection;
          return transition;
        },
        now,
      );
      return { ...summary, rerun };
    }
  }
  return WithHumanCommands;
}

/**
 * Bulk changes written BULK_RUNS runs per transaction, up to BULK_PARALLEL transactions at once
 * (their runs are disjoint: each run is in one chunk); the outcomes in the order given.
 */
async function applyInChunks(
  store: {
    applyCommands(
      changes: readonly { runId: string; change: RunChange }[],
      now: number,
    ): Promise<BulkOutcome[]>;
  },
  changes: readonly { runId: string; change: RunChange }[],
  now: number,
): Promise<BulkOutcome[]> {
  const chunks: (typeof changes)[] = [];
  for (let i = 0; i < changes.length; i += BULK_RUNS) chunks.push(changes.slice(i, i + BULK_RUNS));
  const done: BulkOutcome[][] = new Array(chunks.length);
  let next = 0;
  let failed = false;
  // A lane that fails stops the others taking chunks: the caller hears of it, and no more is written.
  const lane = async () => {
    while (next < chunks.length && !failed) {
      const index = next++;
      try {
        done[index] = await store.applyCommands(chunks[index]!, now);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(BULK_PARALLEL, chunks.length) }, lane));
  return done.flat();
}

/** Bulk transactions in flight at once (PostgreSQL overlaps them; SQLite writes them in turn). */
const BULK_PARALLEL = 3;

/**
 * Each run's change applied to its state as loaded (`stateOf`), for a bulk write: a run not found,
 * or whose change a BatonError refuses (it moved on), is answered `refused` and left out; the
 * dialect writes the transitions, in its transaction.
 */
export function decideEach<S extends { state: RunState }>(
  changes: readonly { runId: string; change: RunChange }[],
  stateOf: (runId: string) => S | undefined,
): ({ runId: string; entry: S; transition: Transition } | { runId: string; refused: string })[] {
  return changes.map(({ runId, change }) => {
    const entry = stateOf(runId);
    if (!entry) return { runId, refused: `run ${runId} not found` };
    try {
      return { runId, entry, transition: change(entry.state) };
    } catch (error) {
      if (!isBatonError(error)) throw error;
      return { runId, refused: error.message };
    }
  });
}
