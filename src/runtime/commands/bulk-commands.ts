import { BatonError } from '../../core/errors.js';
import { FAILURE_CLASSES, type FailureClass } from '../../core/failure.js';
import { checkLabels } from '../../core/labels.js';
import { FINAL_RUN_STATUSES, RUN_STATUSES } from '../../core/run-state.js';
import type { BulkOutcome } from '../../store/store.js';
import type { CommandContext } from './context.js';

/**
 * Commands over many runs at once, the same for every door (`baton retry --blocked`, `baton cancel`
 * with filters, `Baton.retryBlocked|cancelRuns`, MCP `retry_blocked|cancel_runs`, the console
 * inbox's multi-select): the runs are chosen by filters, listed exactly as they will be touched
 * (`dryRun` stops there), then written in bulk transactions (store BULK_RUNS at a time). A run that
 * moved on meanwhile is reported refused with why, never half-changed.
 */

/** Which runs a bulk command touches; every filter optional, all must hold. */
export interface RunsFilter {
  /** Only runs that are blocked (cancel; retry always takes blocked steps). */
  blocked?: boolean;
  /** Blocked steps of this failure class (implies blocked). */
  failureClass?: FailureClass;
  /** Blocked within this many ms before now (with blocked or a class), else created within. */
  sinceMs?: number;
  planName?: string;
  labels?: Readonly<Record<string, string>>;
  /** Exactly these runs (the console's multi-select). */
  runIds?: readonly string[];
}

export interface BulkRequest {
  filter: RunsFilter;
  /** List what would be touched and change nothing. */
  dryRun?: boolean;
  /** cancel: run each run's `compensate:` steps (core/cleanup.ts); absent: as its plan's `onFailure` says. */
  compensate?: boolean;
}

/** One run a bulk command touched, or would. */
export interface BulkRun {
  runId: string;
  planName: string;
  /** retry: the blocked steps retried. */
  stepIds?: string[];
  outcome: 'would retry' | 'retried' | 'would cancel' | 'cancelled' | 'refused';
  /** Why it was refused. */
  reason?: string;
}

export interface BulkAnswer {
  dryRun: boolean;
  runs: BulkRun[];
  /** BULK_LIMIT runs were found: there may be more; narrow the filters and run it again. */
  limited?: boolean;
}

/** Runs one bulk command touches at most: past it, narrow the filters and run it again. */
export const BULK_LIMIT = 100_000;

/** `baton retry --blocked [filters]`: every blocked step matching, retried; their runs go on. */
export async function retryBlocked(ctx: CommandContext, request: BulkRequest): Promise<BulkAnswer> {
  const filter = checkFilter(request.filter);
  const targets = await blockedTargets(ctx, filter);
  if (request.dryRun)
    return withUnchosen(
      { dryRun: true, runs: targets.map((t) => ({ ...t, outcome: 'would retry' })) },
      filter,
    );
  // Each step is retried only while it is still blocked as it was listed (its class, when chosen by it).
  const outcomes = await ctx.store.retryRunSteps(
    targets.map((t) => ({
      ...t,
      ...(filter.failureClass !== undefined ? { failureClass: filter.failureClass } : {}),
    })),
    ctx.now(),
  );
  if (targets.length > 0) ctx.nudge();
  return withUnchosen({ dryRun: false, runs: answered(targets, outcomes, 'retried') }, filter);
}

/** `baton cancel [filters]`: every unfinished run matching, cancelled (its running attempts stopped). */
export async function cancelRuns(ctx: CommandContext, request: BulkRequest): Promise<BulkAnswer> {
  const filter = checkFilter(request.filter);
  if (!hasFilter(filter))
    throw new BatonError(
      'INVALID_ARGUMENT',
      'cancel: name a run, or filters (--blocked, --class, --since, --plan, --label) that choose the runs',
    );
  let targets: { runId: string; planName: string; stepIds?: string[] }[];
  // Blocked runs are the runs with a blocked step (a run whose other steps still run too), as
  // retry --blocked finds them: listed with their blocked steps.
  if (filter.blocked || filter.failureClass !== undefined) {
    targets = await blockedTargets(ctx, filter);
  } else {
    const runs = await ctx.store.selectRuns({
      statuses: RUN_STATUSES.filter((status) => !FINAL_RUN_STATUSES.has(status)),
      ...(filter.planName !== undefined ? { planName: filter.planName } : {}),
      ...(filter.sinceMs !== undefined ? { createdFrom: ctx.now() - filter.sinceMs } : {}),
      ...(filter.labels !== undefined ? { labels: filter.labels } : {}),
      limit: BULK_LIMIT,
    });
    targets = runs.map((run) => ({ runId: run.id, planName: run.planName }));
  }
  targets = onlyChosen(targets, filter);
  if (request.dryRun)
    return withUnchosen(
      { dryRun: true, runs: targets.map((t) => ({ ...t, outcome: 'would cancel' })) },
      filter,
    );
  const outcomes = await ctx.store.cancelRuns(
    targets.map((t) => t.runId),
    ctx.now(),
    request.compensate === undefined ? undefined : { compensate: request.compensate },
  );
  // A run with cleanup to do runs it before it is cancelled.
  if (outcomes.some((outcome) => 'summary' in outcome && outcome.summary.status === 'running')) ctx.nudge();
  return withUnchosen({ dryRun: false, runs: answered(targets, outcomes, 'cancelled') }, filter);
}

function hasFilter(filter: RunsFilter): boolean {
  return (
    filter.blocked === true ||
    filter.failureClass !== undefined ||
    filter.sinceMs !== undefined ||
    filter.planName !== undefined ||
    Object.keys(filter.labels ?? {}).length > 0 ||
    filter.runIds !== undefined
  );
}

/** The blocked steps matching, grouped by run (the run blocked longest first, then by id). */
async function blockedTargets(
  ctx: CommandContext,
  filter: RunsFilter,
): Promise<{ runId: string; planName: string; stepIds: string[] }[]> {
  const steps = await ctx.store.listBlockedSteps(BULK_LIMIT, {
    ...(filter.failureClass !== undefined ? { failureClass: filter.failureClass } : {}),
    ...(filter.sinceMs !== undefined ? { blockedFrom: ctx.now() - filter.sinceMs } : {}),
    ...(filter.planName !== undefined ? { planName: filter.planName } : {}),
    ...(filter.labels !== undefined ? { labels: filter.labels } : {}),
  });
  const byRun = new Map<string, { runId: string; planName: string; stepIds: string[] }>();
  const oldestFirst = [...steps].sort(
    (a, b) => a.blockedAt - b.blockedAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0),
  );
  for (const step of oldestFirst) {
    const target = byRun.get(step.runId) ?? { runId: step.runId, planName: step.planName, stepIds: [] };
    target.stepIds.push(step.stepId);
    byRun.set(step.runId, target);
  }
  return onlyChosen([...byRun.values()], filter);
}

/**
 * The answer with the runs chosen by id that the filters did not find (no longer blocked, ended,
 * unknown) said as refused, and whether BULK_LIMIT cut the runs found.
 */
function withUnchosen(answer: BulkAnswer, filter: RunsFilter): BulkAnswer {
  const found = new Set(answer.runs.map((run) => run.runId));
  const missing = (filter.runIds ?? []).filter((runId) => !found.has(runId));
  return {
    ...answer,
    runs: [
      ...answer.runs,
      ...missing.map((runId) => ({
        runId,
        planName: '',
        outcome: 'refused' as const,
        reason: `run ${runId} is not one the filters choose now (it moved on, ended, or does not exist)`,
      })),
    ],
    ...(answer.runs.length >= BULK_LIMIT ? { limited: true } : {}),
  };
}

function onlyChosen<T extends { runId: string }>(targets: T[], filter: RunsFilter): T[] {
  if (filter.runIds === undefined) return targets;
  const chosen = new Set(filter.runIds);
  return targets.filter((target) => chosen.has(target.runId));
}

function answered(
  targets: readonly { runId: string; planName: string; stepIds?: string[] }[],
  outcomes: readonly BulkOutcome[],
  done: 'retried' | 'cancelled',
): BulkRun[] {
  const byRun = new Map(outcomes.map((outcome) => [outcome.runId, outcome]));
  return targets.map((target) => {
    const outcome = byRun.get(target.runId);
    return outcome && 'refused' in outcome
      ? { ...target, outcome: 'refused', reason: outcome.refused }
      : { ...target, outcome: done };
  });
}

/** The filter as a door gave it, checked: a known class, a positive duration, labels. */
function checkFilter(filter: RunsFilter): RunsFilter {
  if (filter.failureClass !== undefined && !FAILURE_CLASSES.includes(filter.failureClass))
    throw new BatonError(
      'INVALID_ARGUMENT',
      `--class: "${String(filter.failureClass).slice(0, 40)}" is not a failure class (one of ${FAILURE_CLASSES.join(', ')})`,
    );
  if (filter.sinceMs !== undefined && !(Number.isFinite(filter.sinceMs) && filter.sinceMs > 0))
    throw new BatonError('INVALID_ARGUMENT', '--since: expected a duration such as 2h');
  if (filter.runIds !== undefined && filter.runIds.length === 0)
    throw new BatonError('INVALID_ARGUMENT', 'no run chosen');
  return {
    ...filter,
    ...(filter.labels !== undefined ? { labels: checkLabels(filter.labels, '--label') } : {}),
  };
}
