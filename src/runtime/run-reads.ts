import { BatonError, runNotFound } from '../core/errors.js';
import type { StoredEvent } from '../core/events.js';
import { flowKeyOf, formatFlowRate } from '../core/flow.js';
import { planIndex, type RunStatus, type StepStatus } from '../core/run-state.js';
import { childRunId } from '../core/sub-plans.js';
import { asksToolApprovals, type PendingToolApproval, pendingToolApprovals } from '../core/tool-approval.js';
import {
  NO_STEPS,
  type RunDetail,
  type RunWithSteps,
  type StepSelection,
  type Store,
} from '../store/store.js';

/**
 * The reads of one run every front door shares (`baton status`, `baton logs`, the MCP server's
 * `run_status`): the run or a refusal naming it, the steps worth listing, and its flow waits.
 */

/** A due step of a running run held back by a flow limit now, with why. */
export interface FlowWait {
  stepId: string;
  key: string;
  reason: string;
}

export async function requireRun(store: Store, runId: string): Promise<RunDetail> {
  const run = await store.getRun(runId);
  if (!run) throw runNotFound(runId);
  return run;
}

/** Refuses a step the run does not have, naming the ones it has. */
export function requireStepOf(run: RunDetail, stepId: string): void {
  if (!run.steps.some((step) => step.stepId === stepId)) {
    const known = run.steps.map((step) => step.stepId).join(', ');
    throw new BatonError('STEP_NOT_FOUND', `run ${run.id} has no step "${stepId}" (steps: ${known})`);
  }
}

/** The wait a step is in now: its declared kind, what it waits for and the seq of its `step.waiting`. */
export interface CurrentWait {
  kind: 'approval' | 'event';
  waitingFor: string;
  waitSeq: number;
}

/** The wait `stepId` of `run` is in now, or null when it does not wait. */
export async function currentWait(store: Store, run: RunDetail, stepId: string): Promise<CurrentWait | null> {
  const position = run.steps.findIndex((s) => s.stepId === stepId);
  const step = run.steps[position];
  const declared = run.plan.steps[position];
  if (!step || step.status !== 'waiting' || !declared?.wait) return null;
  const events = await store.getEvents(run.id);
  const started = events.findLast(
    (e): e is Extract<StoredEvent, { type: 'step.waiting' }> =>
      e.type === 'step.waiting' && e.stepId === stepId,
  );
  if (!started) return null;
  return { kind: declared.wait.for, waitingFor: step.waitingFor ?? started.waitingFor, waitSeq: started.seq };
}

/**
 * `baton status <run>` lists every step of a run of up to this many steps. A larger run is shown
 * as its counts per status and the steps that need a look (LISTED_STATUSES): 10,000 lines of
 * `succeeded` tell nobody anything, and reading them is most of the command's time.
 */
const EVERY_STEP_UP_TO = 100;
export const LISTED_STATUSES: readonly StepStatus[] = [
  'ready',
  'running',
  'retry_wait',
  'waiting',
  'blocked',
  'degraded',
];

/** The steps `status <run>` lists: every one with `--all`, else as EVERY_STEP_UP_TO says. */
function listedSteps(all: boolean): StepSelection {
  return { statuses: LISTED_STATUSES, everyStepUpTo: all ? Number.MAX_SAFE_INTEGER : EVERY_STEP_UP_TO };
}

/** A run with the steps `status <run>` lists (see listedSteps). */
export async function requireRunSteps(store: Store, runId: string, all: boolean): Promise<RunWithSteps> {
  const run = await store.getRunSteps(runId, listedSteps(all));
  if (!run) throw runNotFound(runId);
  return run;
}

/** Due steps of a running run held back by a flow limit now, with why (for `status`). */
export async function flowWaits(store: Store, run: RunWithSteps, now: number): Promise<FlowWait[]> {
  if (run.status !== 'running') return [];
  const due = run.steps.filter(
    (step) => (step.status === 'ready' || step.status === 'retry_wait') && (step.dueAt ?? now + 1) <= now,
  );
  if (due.length === 0) return [];
  const limits = new Map((await store.listFlowLimits(now)).map((limit) => [limit.key, limit]));
  // By id, not by index: `run.steps` may be some of the plan's steps (see requireRunSteps).
  const { position } = planIndex(run.plan);
  const waits: FlowWait[] = [];
  for (const step of due) {
    const key = flowKeyOf(run.plan.steps[position.get(step.stepId)!]!, step.onFallback === true);
    const limit = limits.get(key);
    if (!limit) continue;
    if (limit.concurrency !== null && limit.running >= limit.concurrency)
      waits.push({ stepId: step.stepId, key, reason: `${limit.running} of ${limit.concurrency} running` });
    else if (limit.rate !== null && limit.recentStarts >= limit.rate.count)
      waits.push({
        stepId: step.stepId,
        key,
        reason: `${limit.recentStarts} started in the last ${formatFlowRate(limit.rate).split('/')[1]}`,
      });
  }
  return waits;
}

/**
 * The tool calls the run's running agents wait on a person for (`agent.approve`), oldest first;
 * the run's events are read only when a running step's agent has approval rules.
 */
export async function waitingToolCalls(
  store: Store,
  run: Pick<RunWithSteps, 'id' | 'plan' | 'steps'>,
): Promise<PendingToolApproval[]> {
  const index = planIndex(run.plan);
  const running = new Map<string, number>();
  for (const step of run.steps) {
    const planStep = run.plan.steps[index.position.get(step.stepId) ?? -1];
    if (step.status === 'running' && asksToolApprovals(planStep)) running.set(step.stepId, step.attempt);
  }
  if (running.size === 0) return [];
  return pendingToolApprovals(await store.getEvents(run.id), running);
}

/** A held tool call with its run, as `check` and the console inbox list them. */
export interface RunToolCall extends PendingToolApproval {
  runId: string;
  planName: string;
}

/**
 * The tool calls every running agent waits on a person for, oldest first, at most `limit`: the runs
 * of the leases held now are read (few: one per running attempt), and their events only when a
 * running step's agent has approval rules.
 */
export async function everyWaitingToolCall(store: Store, limit: number): Promise<RunToolCall[]> {
  const runIds = [...new Set((await store.listLeases()).map((lease) => lease.runId))];
  const found = await Promise.all(
    runIds.map(async (runId) => {
      const run = await store.getRunSteps(runId, { statuses: ['running'], everyStepUpTo: 0 });
      if (!run) return [];
      const calls = await waitingToolCalls(store, run);
      return calls.map((call) => ({ ...call, runId, planName: run.planName }));
    }),
  );
  return found
    .flat()
    .sort((a, b) => a.requestedAt - b.requestedAt || a.requestSeq - b.requestSeq)
    .slice(0, limit);
}

/** A child run a running sub-plan step waits on (core/sub-plans.ts), as `status` shows it. */
export interface ChildRun {
  stepId: string;
  runId: string;
  status: RunStatus;
  blockedReason: string | null;
}

/** The child runs the running sub-plan steps of `run` wait on (steps not listed are not looked at). */
export async function runChildren(
  store: Pick<Store, 'getRunSteps'>,
  run: Pick<RunWithSteps, 'id' | 'plan' | 'steps'>,
): Promise<ChildRun[]> {
  const children: ChildRun[] = [];
  const { position } = planIndex(run.plan);
  for (const step of run.steps) {
    const at = position.get(step.stepId);
    if (step.status !== 'running' || at === undefined || run.plan.steps[at]!.kind !== 'plan') continue;
    if (step.firstStartedAt == null) continue;
    const runId = childRunId(run.id, step.stepId, step.firstStartedAt);
    const child = await store.getRunSteps(runId, NO_STEPS);
    if (child)
      children.push({ stepId: step.stepId, runId, status: child.status, blockedReason: child.blockedReason });
  }
  return children;
}
