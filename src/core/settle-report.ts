import type { RandomSource } from './backoff.js';
import { Draft, type Transition } from './draft.js';
import type { StepOutcome } from './failure.js';
import { type RunState, type StepResult, stepOf } from './run-state.js';
import { completeStep } from './transitions.js';

/** A worker's report that an attempt it claimed ended (the store's Completion is one). */
interface AttemptReport {
  stepId: string;
  attempt: number;
  owner: string;
  /** When the attempt started, by its worker's clock. */
  startedAt: number;
  outcome: StepOutcome;
}

/** True when `owner` still holds the lease of this attempt: otherwise its outcome is stale. */
function holdsLease(run: RunState, stepId: string, attempt: number, owner: string): boolean {
  const step = stepOf(run, stepId);
  return step?.status === 'running' && step.attempt === attempt && step.leaseOwner === owner;
}

/**
 * Whether the store must look up if this report's tokens were recorded already: a report that will
 * be discarded and carries usage may be one sent again after a commit whose acknowledgement was lost.
 */
export function mayRepeatUsage(run: RunState, report: AttemptReport): boolean {
  const { stepId, attempt, owner, outcome } = report;
  return outcome.usage !== undefined && !holdsLease(run, stepId, attempt, owner);
}

/**
 * Whether a report cannot be of this run but is of an earlier run under the same id (deleted by
 * gc while the attempt ran, then created again). Within one run a step's attempts are numbered up
 * from 1, so a report of a step the plan lacks or of an attempt not claimed yet is foreign; a
 * report its lease holder sends never is; and one that would be discarded is foreign when its
 * attempt started before this run was created (its worker's clock, so only where that decides
 * nothing a live report needs). A foreign report settles and records nothing: its attempt row
 * would take the place of this run's own, its tokens would count against a run that did not
 * spend them.
 */
export function isForeignReport(run: RunState, report: AttemptReport): boolean {
  const { stepId, attempt, owner } = report;
  const step = stepOf(run, stepId);
  if (!step || attempt > step.attempt) return true;
  if (holdsLease(run, stepId, attempt, owner)) return false;
  return report.startedAt < run.createdAt;
}

/** An attempt row stored already, as the lookup of a report that may repeat one reads it. */
export interface StoredAttempt {
  owner: string | null;
  /** Its tokens are recorded already. */
  hasUsage: boolean;
}

/** What a report's stored attempt row says of it: see storedAttemptSays. */
export type StoredAttemptVerdict = 'none' | 'usage' | 'foreign';

/**
 * What the stored row of a report's attempt says of it (see mayRepeatUsage): `usage` when it is
 * the same report again and its tokens are counted; `foreign` when another owner's attempt has
 * that row, which within one run never happens (an attempt is claimed once, and a reclaim writes
 * the claimer's row), so the report is of an earlier run under the same id; else `none`.
 */
export function storedAttemptSays(
  report: Pick<AttemptReport, 'owner'>,
  row: StoredAttempt | undefined,
): StoredAttemptVerdict {
  if (!row) return 'none';
  if (row.owner !== null && row.owner !== report.owner) return 'foreign';
  return row.hasUsage ? 'usage' : 'none';
}

/** The stored result of a succeeded attempt (what templates and later steps read). */
export function resultOf(outcome: Extract<StepOutcome, { ok: true }>): StepResult {
  return {
    summary: outcome.summary,
    outputs: outcome.outputs,
    ...(outcome.value === undefined ? {} : { value: outcome.value }),
    ...(outcome.resultRef === undefined ? {} : { ref: outcome.resultRef }),
    ...(outcome.verification === undefined ? {} : { verification: outcome.verification }),
  };
}

/** What a report did to its run: see settleReport. */
interface Settlement {
  /** Its worker held the lease: the outcome is the step's (else it was discarded). */
  live: boolean;
  /** Null when the run does not change. */
  transition: Transition | null;
}

/**
 * What a reported attempt does to its run (not foreign: isForeignReport). `live` when its worker
 * still holds the lease: the step completes (completeStep). Otherwise the outcome is discarded: a
 * cancelled step's lease that the attempt kept for flow control is released, and the tokens it spent
 * count against the step and the run all the same (unless `usageRecorded`: its attempt row holds
 * them already), so the claims of the same cycle see them. No budget is checked here: the step's
 * next claim or outcome does.
 */
export function settleReport(
  run: RunState,
  report: AttemptReport,
  now: number,
  random: RandomSource,
  usageRecorded = false,
): Settlement {
  const { stepId, attempt, owner, outcome } = report;
  if (holdsLease(run, stepId, attempt, owner)) {
    const resultJson = outcome.ok ? JSON.stringify(resultOf(outcome)) : null;
    return { live: true, transition: completeStep(run, stepId, outcome, now, random, resultJson) };
  }
  const step = stepOf(run, stepId);
  if (!step) return { live: false, transition: null };
  // A cancel or a rerun left this attempt its lease (flow control, no early restart): it ends now.
  const releases = step.status !== 'running' && step.attempt === attempt && step.leaseOwner === owner;
  const usage = usageRecorded ? undefined : outcome.usage;
  if (!releases && !usage) return { live: false, transition: null };
  const draft = new Draft(run, now);
  if (releases) {
    // A rerun step due once the lease ran out is due now.
    const due = step.status === 'ready' && step.dueAt !== null && step.dueAt > now ? { dueAt: now } : {};
    draft.setStep(stepId, { leaseOwner: null, leaseExpiresAt: null, ...due });
  }
  if (usage) draft.addUsage(stepId, usage);
  return { live: false, transition: draft.finish() };
}
