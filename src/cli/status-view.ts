import { budgetLeft } from '../core/budget.js';
import { statusWithCleanup } from '../core/cleanup.js';
import type { StoredEvent } from '../core/events.js';
import { labelsText } from '../core/labels.js';
import { planIndex, type RunStatus, STEP_STATUSES } from '../core/run-state.js';
import { staleSteps } from '../core/stale-steps.js';
import { type PendingToolApproval, toolCallCommands, toolCallLine } from '../core/tool-approval.js';
import { verificationOf, verificationText } from '../core/verify.js';
import { fanOutLine, fanOutProgress } from '../runtime/fan-out-progress.js';
import { blockedHints, formatTime, skipCause, stepProgress, waitingHints } from '../runtime/format.js';
import { agoText } from '../runtime/last-output.js';
import { type ChildRun, type FlowWait, LISTED_STATUSES } from '../runtime/run-reads.js';
import type { RunSummary, RunWithSteps } from '../runtime/types.js';
import { budgetLeftText, usageText } from '../runtime/usage-text.js';
import { type Painter, paintStatus } from './colour.js';
import { EXIT } from './exit-codes.js';
import { table } from './format.js';

// The reads moved to runtime/ (the MCP server shares them); their callers here import them from here.
export {
  flowWaits,
  requireRun,
  requireRunSteps,
  runChildren,
  waitingToolCalls,
} from '../runtime/run-reads.js';

/** Runs in these states wait for nobody but a human: a watch of them ends. */
const SETTLED: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'blocked', 'cancelled']);

export function runSettled(run: RunSummary): boolean {
  return SETTLED.has(run.status);
}

/** The exit code of `status <run>`: 1 when the run is blocked, failed or cancelled. */
export function runExitCode(run: RunSummary): number {
  return run.status === 'blocked' || run.status === 'failed' || run.status === 'cancelled'
    ? EXIT.workFailed
    : EXIT.ok;
}

/** ` (cleanup 2/2 done)` after the status of a run that ran its cleanup (` (cancelling, cleanup 1/2 done)` meanwhile). */
function cleanupText(run: RunWithSteps): string {
  const text = statusWithCleanup(run.status, run.plan, run.steps);
  return text.slice(run.status.length);
}

/** The recent runs, one line each (`baton status`). */
export function runListLines(
  runs: readonly RunSummary[],
  paint: Painter,
  labels: Readonly<Record<string, Record<string, string>>> = {},
): string {
  // A LABELS column when a listed run has labels.
  const labelled = runs.some((run) => labels[run.id] !== undefined);
  const rows = [['RUN', 'PLAN', 'STATUS', 'STEPS', 'UPDATED', ...(labelled ? ['LABELS'] : [])]];
  for (const run of runs)
    rows.push([
      run.id,
      run.planName,
      paintStatus(paint, run.status),
      stepProgress(run),
      formatTime(run.updatedAt),
      ...(labelled ? [labelsText(labels[run.id] ?? {})] : []),
    ]);
  return table(rows);
}

/** Why a step was skipped, from its latest `step.skipped` event: the reason recorded, and as `status` says it. */
export interface SkipReason {
  reason: string | undefined;
  text: string;
}

/**
 * Adds to `into` the skip reason of each step that `events` (a run's, in order) skip, the latest
 * one winning: a step skipped, rerun and skipped again has its last reason.
 */
export function addSkipReasons(
  events: readonly StoredEvent[],
  into: Map<string, SkipReason> = new Map(),
): Map<string, SkipReason> {
  for (const event of events)
    if (event.type === 'step.skipped')
      into.set(event.stepId, { reason: event.reason, text: skipCause(event).text });
  return into;
}

/** What a run's view needs besides the run: now (for its wall-clock budget) and why steps were skipped. */
export interface StatusContext {
  now: number;
  /** From addSkipReasons over the run's events; absent: skipped steps are shown without a reason. */
  skips?: ReadonlyMap<string, SkipReason>;
  /** When each running agent step last printed (runtime/last-output.ts); absent: not shown. */
  lastOutput?: ReadonlyMap<string, number>;
  /** Tool calls its running agents wait on a person for (runtime/run-reads.ts waitingToolCalls). */
  toolCalls?: readonly PendingToolApproval[];
  /** The child runs its running sub-plan steps wait on (runtime/run-reads.ts runChildren). */
  children?: readonly ChildRun[];
}

/**
 * One run: its header (a shadow run marked), its usage and what is left of its budget, a table of
 * its steps, why skipped steps were skipped (apart from errors), flow waits and what to do about
 * blocked and waiting steps. A run whose steps are not all here (`getRunSteps` of a large run) also
 * gets its counts per status and a line saying which steps are not listed.
 */
export function runStatusLines(
  run: RunWithSteps,
  waits: readonly FlowWait[],
  paint: Painter,
  context: StatusContext = { now: Date.now() },
): string[] {
  const shadow = run.plan.shadow === true;
  const elapsed = (run.finishedAt ?? context.now) - run.createdAt;
  const lines = [
    `run ${run.id}  plan ${run.planName}${shadow ? ' (shadow)' : ''}  ${paintStatus(paint, run.status)}${cleanupText(run)}  ${stepProgress(run)} steps done  ${run.attemptsTotal} attempts`,
    `workspace ${run.workspace}`,
    `usage ${usageText(run.usage)}`,
    `budget left ${budgetLeftText(budgetLeft(run.plan.limits, run.usage, elapsed))}`,
  ];
  if (shadow)
    lines.push('shadow run: steps with a side effect are recorded (step.would_execute), not executed');
  if (run.plan.parent)
    lines.push(`child of run ${run.plan.parent.runId} (its step ${run.plan.parent.stepId})`);
  for (const child of context.children ?? [])
    lines.push(
      `step ${child.stepId}: waiting on child ${child.runId}: ${child.status}${child.blockedReason ? ` (${firstLine(child.blockedReason, 200)})` : ''}`,
    );
  if (run.plan.forkedFrom)
    lines.push(`forked from run ${run.plan.forkedFrom.runId} at step ${run.plan.forkedFrom.stepId}`);
  if (run.blockedReason) lines.push(`blocked: ${run.blockedReason}`);
  // Known when every step is here (a large run: --all).
  const stale = new Set(run.steps.length === run.plan.steps.length ? staleSteps(run) : []);
  // A fan-out's progress: its items may be thousands, most not listed.
  for (const progress of fanOutProgress(run.plan, run.steps)) lines.push(fanOutLine(progress));
  const counts = STEP_STATUSES.filter((status) => (run.stepCounts[status] ?? 0) > 0);
  const total = counts.reduce((sum, status) => sum + run.stepCounts[status]!, 0);
  const unlisted = total - run.steps.length;
  if (unlisted > 0)
    lines.push(
      `steps: ${counts.map((status) => `${run.stepCounts[status]} ${paintStatus(paint, status)}`).join(', ')}`,
    );
  // A table, unless a large run has no step worth listing.
  if (run.steps.length > 0 || unlisted === 0) {
    // Titles only when a plan gave them: a title that repeats the id is noise.
    const titled = run.steps.some((step) => step.title !== step.stepId);
    const rows = [['STEP', ...(titled ? ['TITLE'] : []), 'STATUS', 'ATTEMPTS', 'DUE', 'LAST ERROR']];
    for (const step of run.steps) {
      const due =
        step.dueAt !== null &&
        (step.status === 'ready' || step.status === 'retry_wait' || step.status === 'waiting')
          ? formatTime(step.dueAt)
          : '-';
      rows.push([
        step.stepId,
        ...(titled ? [firstLine(step.title, 40)] : []),
        stale.has(step.stepId)
          ? `${paintStatus(paint, step.status)} (stale)`
          : paintStatus(paint, step.status),
        String(step.attempt),
        due,
        // A `when` skip is recorded as the step's last error: it is a reason, listed below the table.
        step.status === 'skipped' && context.skips?.get(step.stepId)?.reason === step.lastError
          ? ''
          : firstLine(step.lastError ?? '', 80),
      ]);
    }
    lines.push(...table(rows).split('\n'));
  }
  if (unlisted > 0) {
    const hidden = counts.filter((status) => !LISTED_STATUSES.includes(status));
    lines.push(
      `${unlisted} ${hidden.join('/')} steps not listed: baton status ${run.id} --all lists every step`,
    );
  }
  for (const step of run.steps) {
    const verification = verificationOf(step.resultJson);
    if (verification) lines.push(`${step.stepId} ${verificationText(verification)}`);
  }
  for (const step of run.steps) {
    const at = step.status === 'running' ? context.lastOutput?.get(step.stepId) : undefined;
    if (at !== undefined)
      lines.push(`${step.stepId} is running: last output ${agoText(context.now - at)} ago`);
  }
  for (const call of context.toolCalls ?? []) {
    const [approve, reject] = toolCallCommands(run.id, call.stepId, call.callId);
    lines.push('', toolCallLine(call, formatTime(call.timeoutAt)), `  ${approve}   or: ${reject}`);
  }
  const skipped = run.steps.filter((step) => step.status === 'skipped' && context.skips?.has(step.stepId));
  if (skipped.length > 0)
    lines.push(
      '',
      ...skipped.map((step) => `${step.stepId} ${firstLine(context.skips!.get(step.stepId)!.text, 200)}`),
    );
  if (stale.size > 0) {
    const [first] = stale;
    lines.push(
      `stale: ${[...stale].join(', ')} kept a result resting on an older result of a step before them (baton rerun --only); to bring them up to date: baton rerun ${run.id} --from ${first}`,
    );
  }
  for (const wait of waits)
    lines.push(`${wait.stepId} is due and waits for flow key ${wait.key}: ${wait.reason} (baton flow list)`);
  // Looked up only for a blocked or waiting step.
  const planStepOf = (stepId: string) => run.plan.steps[planIndex(run.plan).position.get(stepId)!]!;
  for (const step of run.steps.filter((s) => s.status === 'blocked')) {
    // A wait that timed out and blocks can still be ended as it could while it waited.
    const timedOutWait = step.waitingFor !== undefined && planStepOf(step.stepId)?.kind === 'wait';
    lines.push(
      '',
      `${step.stepId} is blocked: ${step.blockedReason}`,
      ...(timedOutWait
        ? waitingHints(run.id, planStepOf(step.stepId), step.waitingFor).slice(1)
        : [blockedHints(run.id, step.stepId)]),
    );
  }
  for (const step of run.steps.filter((s) => s.status === 'waiting')) {
    const timeout = step.dueAt === null ? '' : ` (times out ${formatTime(step.dueAt)})`;
    const [what, ...commands] = waitingHints(run.id, planStepOf(step.stepId), step.waitingFor);
    lines.push('', `${what}${timeout}`, ...commands);
  }
  return lines;
}

function firstLine(text: string, max: number): string {
  const end = text.indexOf('\n');
  const line = end === -1 ? text : text.slice(0, end);
  // No more UTF-16 units than `max`: no more characters either, nothing to cut (most cells).
  return line.length <= max ? line : [...line].slice(0, max).join('');
}
